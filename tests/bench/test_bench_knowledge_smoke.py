"""The knowledge benchmark runs end to end and writes only its own section (tiny inputs).

The real run is `python bench/knowledge/run.py --write bench/RESULTS.md`; here it runs on
the conversation tests' small knowledge agent with a two-question set, so it is quick.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "knowledge" / "run.py"
OLD = """\
# Benchmarks

Intro kept as it is.

## HTTP

other numbers, kept

## Knowledge search

old numbers

## Later

kept too
"""
QUESTIONS = """\
agent: tests/conversations/agents/knowledge
questions:
  - q: When does the shop open?
    expect: ["references/shop.md#Opening hours"]
  - q: Can I bring a book back?
    expect: ["references/shop.md#Returns"]
    set: heldout
unanswerable:
  - Where can I park?
"""


def test_the_knowledge_benchmark_runs_and_writes_its_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(OLD, encoding="utf-8")
    questions = tmp_path / "questions.yml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(RUN), "--questions", str(questions), "--write", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = results.read_text(encoding="utf-8")
    assert "other numbers, kept" in text and "kept too" in text and "old numbers" not in text
    assert text.index("## HTTP") < text.index("## Knowledge search") < text.index("## Later")
    section = text.split("## Knowledge search", 1)[1].split("## Later", 1)[0]
    assert "| hybrid | 1.000 | 2/2 = 1.000 | 1/1 = 1.000 | 1/1 |" in section
    assert "embedding one sentence, median" in section and "index build, 2 chunks" in section
