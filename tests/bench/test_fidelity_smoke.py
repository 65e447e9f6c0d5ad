"""The fidelity benchmark runs end to end on two recorded conversations (structure only:
the measures exist and the shares are in [0, 1]; no value and no timing is checked here).

The real run is `python bench/fidelity/run.py --write bench/RESULTS.md` (see bench/RESULTS.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "fidelity" / "run.py"
TRANSCRIPTS = ROOT.parent / "shared" / "data" / "tau-bench" / "airline" / "transcripts.jsonl"
OLD = """\
# Benchmarks

Intro kept as it is.

## Router

kept

## Fidelity

old numbers

## Peers

kept too
"""

SHARES = (
    "earlier_per_call",
    "all_results_per_call",
    "keel_prefix",
    "recorded_prefix",
    "prefix_within_turn",
    "prefix_across_turns",
    "keel_prefix_tools_first",
    "recorded_prefix_tools_first",
    "tools_first_within_turn",
    "tools_first_across_turns",
)
PAIRS = (
    ("earlier_present", "earlier_results"),
    ("current_present", "current_results"),
    ("current_as_recorded", "current_results"),
    ("user_present", "user_texts"),
    ("bot_present", "bot_texts"),
    ("calls_with_earlier", "calls"),
    ("in_step", "transcripts"),
    ("calls", "recorded_calls"),
    ("prefix_pairs", "keel_requests"),
)


@pytest.mark.skipif(not TRANSCRIPTS.exists(), reason="no recorded transcripts next to the repo")
def test_the_fidelity_benchmark_measures_and_writes_its_section(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    results.write_text(OLD, encoding="utf-8")
    measures = tmp_path / "measures.json"
    before = ROOT / "bench" / "fidelity" / "before-1f03b5c.json"
    args = ["--limit", "2", "--json", str(measures), "--write", str(results)]
    args += ["--before", str(before), "Keel at 1f03b5c"]
    done = subprocess.run(
        [sys.executable, str(RUN), *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(measures.read_text(encoding="utf-8"))
    assert data["transcripts"] == 2
    assert data["calls"] > 0 and data["prefix_pairs"] > 0
    for key in SHARES:
        assert 0.0 <= data[key] <= 1.0, key
    for part, whole in PAIRS:
        assert 0 <= data[part] <= data[whole], (part, whole)
    assert data["keel_tokens"] > 0 and data["recorded_tokens"] > 0
    assert set(data["first_difference"]) <= {"system", "tools", "messages", "none"}
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nIntro kept as it is.\n\n## Router\n\nkept\n")
    assert "old numbers" not in text and text.count("## Fidelity") == 1
    assert text.rstrip().endswith("## Peers\n\nkept too")
    assert "python bench/fidelity/run.py --limit 2" in text
    assert "| measure | Keel, this tree | Keel at 1f03b5c | gpt-4o | goal |" in text
    assert "| earlier-turn tool results present (pooled) |" in text
