"""The scale benchmark runs end to end (one measured turn; no timing is checked here).

The real run is `python bench/scale/run.py --write bench/RESULTS.md` (see bench/RESULTS.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "scale" / "run.py"
OLD = """\
# Benchmarks

Intro kept as it is.

## HTTP

kept

## Scale

old numbers

## Peers

kept too
"""


def test_the_scale_benchmark_generates_measures_and_writes_its_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(OLD, encoding="utf-8")
    args = ["--turns", "1", "--warmup", "0", "--stores", "sqlite", "--scenarios", "active"]
    args += ["--support", "", "--write", str(results)]
    done = subprocess.run(
        [sys.executable, str(RUN), *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "57 skills and 91 tools, 0 errors" in done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| agent | turn | store | tools offered |")
    # The active skill offers its 14 tools plus 6 built-in ones.
    assert rows[2].startswith("| scale | active | sqlite | 20 |")
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nIntro kept as it is.\n\n## HTTP\n\nkept\n\n## Scale\n")
    assert "old numbers" not in text and text.count("## Scale") == 1
    assert "python bench/scale/run.py --turns 1" in text
    assert text.endswith("## Peers\n\nkept too\n")
