"""Recorded gpt-4o conversations run through the airline example agent (Keel's engine,
`ReplayModel`), its policy and its confirmation questions: every run whose writes all ran
ends on the recorded database hash, every recorded success (reward 1) on the task's gold
hash with nothing stopped, and what the policy stopped is reported."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airline"
TAU = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-bench"
TRANSCRIPTS = TAU / "airline" / "transcripts.jsonl"

pytestmark = pytest.mark.skipif(
    not TRANSCRIPTS.is_file(), reason=f"shared τ-bench transcripts not found at {TRANSCRIPTS}"
)


def _script(name: str) -> ModuleType:
    """Import one of the example's scripts under a name of its own."""
    module_name = f"keel_example_airline_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _records(*task_trials: tuple[int, int]) -> list[dict[str, object]]:
    wanted = set(task_trials)
    records = [json.loads(line) for line in TRANSCRIPTS.read_text(encoding="utf-8").splitlines()]
    return [r for r in records if (r["task_id"], r["trial"]) in wanted]


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_every_recorded_conversation_reaches_its_final_hash() -> None:
    replay = _script("replay")
    report = replay.check(TRANSCRIPTS)
    failures = [line for line in replay.report_lines(report) if line.startswith("FAIL")]
    assert failures == []
    assert (report.passed, report.failed) == (40, 0)
    # Where the policy stopped nothing, the only tool-output differences are the known
    # `province` -> `state` drift (after a stopped write the recording's results differ).
    untouched = [o for o in report.outcomes if not o.intervened]
    others = [d.describe() for o in untouched for d in o.other_divergences]
    assert others == []
    assert all(o.actual_hash == o.expected_hash for o in untouched)
    assert sum(outcome.drift for outcome in report.outcomes) == 28
    # No false refusal: every recorded success still reaches its gold hash untouched.
    successes = [o for o in report.outcomes if o.reward == 1]
    assert len(successes) == 5
    assert [(o.name, o.stopped) for o in successes if not o.at_gold or o.intervened] == []


def test_a_tampered_final_hash_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = _script("replay")
    records = _records((1, 0), (5, 3))
    records[1]["final_db_hash"] = "0" * 64
    status = replay.run([str(_write(tmp_path / "t.jsonl", records))])

    out = capsys.readouterr().out.splitlines()
    assert status == 1
    assert out[-1] == "1 passed, 1 failed"
    assert [line for line in out if line.startswith("FAIL")] == [
        f"FAIL task 5 trial 3 (line 2): final db hash {replay.airlinedb.db_hash()} "
        f"!= expected {'0' * 64}"
    ]


def test_a_recording_out_of_step_with_the_engine_is_reported(tmp_path: Path) -> None:
    replay = _script("replay")
    (record,) = _records((1, 0))
    messages = record["messages"]
    assert isinstance(messages, list)
    # Drop the agent's first answer: the first user turn then eats the next turn's reply.
    first_reply = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    del messages[first_reply]
    report = replay.check(_write(tmp_path / "t.jsonl", [record]))

    (outcome,) = report.outcomes
    assert not outcome.passed
    assert any("recorded replies" in problem for problem in outcome.problems)
