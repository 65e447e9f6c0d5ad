"""The HTTP benchmark runs end to end (tiny numbers; no timing is checked here).

The real run is `python bench/http/run.py --write bench/RESULTS.md` (see bench/RESULTS.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "http" / "run.py"
OLD = """\
# Benchmarks

Intro kept as it is.

## HTTP

old numbers

## Other

kept too
"""


def test_the_http_benchmark_runs_and_writes_its_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(OLD, encoding="utf-8")
    args = ["--requests", "12", "--warmup", "2", "--concurrency", "3", "--workers", "1"]
    args += ["--stores", "sqlite,postgresql", "--write", str(results)]
    done = subprocess.run(
        [sys.executable, str(RUN), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| server | store | workers | turns/s | p50 ms | p99 ms |")
    assert rows[2].startswith("| ceiling | - | 1 |")
    assert any(row.startswith("| keel | sqlite | 1 |") for row in rows)
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nIntro kept as it is.\n")
    assert text.count("## HTTP") == 1 and "old numbers" not in text
    assert "python bench/http/run.py --requests 12" in text
    assert "## Other\n\nkept too" in text
    assert "| keel | sqlite | 1 |" in text
