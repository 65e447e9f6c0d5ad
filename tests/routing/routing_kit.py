"""Paths shared by the routing tests (imported by name: `from routing_kit import RETAIL`)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail"
BENCH = ROOT / "bench" / "router"
for path in (RETAIL, BENCH):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
