"""One local embedder for the routing tests (the weights load once per session)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from keel.embeddings.local import LocalEmbedder

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail"
BENCH = ROOT / "bench" / "router"
for path in (RETAIL, BENCH):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()
