"""The airline example's tools conform: every gold call of the shared airline tasks gives the
reference output through Keel's dispatch, and every task ends on its database hash."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "airline"
TAU = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-bench"
TASKS = TAU / "airline" / "tasks.jsonl"
INITIAL_HASH = "f212eeda89b986239ddfb1a9b3d07d2b388112869864655ec9e5cc7ab07ab41c"

pytestmark = pytest.mark.skipif(
    not TASKS.is_file(), reason=f"shared τ-bench data not found at {TASKS}"
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


def test_every_airline_task_conforms() -> None:
    conformance = _script("conformance")
    report = conformance.check(TASKS)
    assert [outcome.summary() for outcome in report.failures] == []
    assert (report.passed, report.failed, report.calls) == (50, 0, 158)
    db = conformance.airlinedb
    # The fast hash is the README's definition, and no tool wrote into the pristine copy.
    assert db.db_hash() == db.full_hash(db.current())
    assert db.pristine_hash() == INITIAL_HASH
    db.reset()
    assert db.db_hash() == INITIAL_HASH


def test_a_tampered_output_or_hash_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conformance = _script("conformance")
    lines = TASKS.read_text(encoding="utf-8").splitlines()
    tasks = [json.loads(line) for line in lines[:3]]
    tasks[0]["actions"][0]["expected_output"] += " "
    tasks[1]["final_db_hash"] = "0" * 64
    tampered = tmp_path / "tasks.jsonl"
    tampered.write_text("".join(json.dumps(task) + "\n" for task in tasks), encoding="utf-8")

    status = conformance.run([str(tampered)])

    out = capsys.readouterr().out.splitlines()
    assert status == 1
    assert out[-1] == "1 passed, 2 failed"
    assert out[0].startswith(f"FAIL {tasks[0]['id']}: call 0 (")
    assert out[1].startswith(f"FAIL {tasks[1]['id']}: final db hash ")
