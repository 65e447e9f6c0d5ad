"""The retail example's tools replay every τ-bench retail gold call exactly (issue 6).

Every tasks file in `../shared/data/tau-bench/retail/` goes through Keel's tool dispatch
(`keel.testing.conformance`): each output must equal the reference's string and each task's
final database hash the reference's. The tool schemas must accept what the reference's do,
and a wrong expected output, a wrong hash or invalid arguments must fail, so the check can
fail. The documented command is run once as a user would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keel.project.definition import AgentDefinition
from keel.testing.conformance import load_conformance_project, replay_tasks_file

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "retail"
TAU = Path(__file__).resolve().parents[3] / "shared" / "data" / "tau-bench"
RETAIL = TAU / "retail"
TASK_FILES = sorted(RETAIL.glob("tasks*.jsonl")) if RETAIL.is_dir() else []

needs_data = pytest.mark.skipif(not RETAIL.is_dir(), reason=f"tau-bench data not present at {TAU}")

if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))
import retaildb  # noqa: E402  (the package the project's tools import)


@pytest.fixture(scope="module")
def definition() -> Iterator[AgentDefinition]:
    yield load_conformance_project(PROJECT)
    retaildb.reset()


async def replay(definition: AgentDefinition, tasks: Path) -> Any:
    return await replay_tasks_file(
        definition, tasks, reset=retaildb.reset, db_hash=retaildb.db_hash
    )


@needs_data
@pytest.mark.parametrize("tasks", TASK_FILES, ids=[p.name for p in TASK_FILES])
async def test_every_gold_call_and_final_hash_matches(
    definition: AgentDefinition, tasks: Path
) -> None:
    lines = [line for line in tasks.read_text(encoding="utf-8").splitlines() if line.strip()]
    calls = sum(len(json.loads(line)["actions"]) for line in lines)
    report = await replay(definition, tasks)
    assert [outcome.summary() for outcome in report.failures] == []
    assert (report.passed, report.calls) == (len(lines), calls)


@needs_data
def test_tool_schemas_take_the_reference_arguments(definition: AgentDefinition) -> None:
    reference = json.loads((RETAIL / "tools.json").read_text(encoding="utf-8"))
    wanted = {entry["function"]["name"]: entry["function"]["parameters"] for entry in reference}
    tools = definition.shared_tools
    assert sorted(tools) == sorted(wanted)
    for name, parameters in wanted.items():
        offered = tools[name].json_schema()
        assert without_prose(offered) == without_prose(parameters), name
        assert offered["additionalProperties"] is False


def without_prose(schema: object) -> object:
    """The schema without descriptions (ours are our own words) or additionalProperties."""
    if isinstance(schema, dict):
        return {
            key: without_prose(value)
            for key, value in schema.items()
            if key not in ("description", "additionalProperties")
        }
    if isinstance(schema, list):
        return [without_prose(item) for item in schema]
    return schema


ADDRESS = {
    "address1": "1 Main St",
    "address2": "",
    "city": "Austin",
    "state": "TX",
    "country": "USA",
    "zip": "73301",
}


def task(task_id: str, actions: list[dict[str, Any]], final_db_hash: str) -> str:
    return json.dumps({"id": task_id, "actions": actions, "final_db_hash": final_db_hash})


def broken_tasks(tmp_path: Path) -> Path:
    """A passing task (read a user, change their address), then copies broken three ways."""
    database = retaildb.fresh_copy()
    user_id, user = next(iter(database["users"].items()))
    read = {
        "name": "get_user_details",
        "arguments": {"user_id": user_id},
        "expected_output": json.dumps(user),
    }
    user["address"] = dict(ADDRESS)
    write = {
        "name": "modify_user_address",
        "arguments": {"user_id": user_id, **ADDRESS},
        "expected_output": json.dumps(user),
    }
    changed, untouched = retaildb.db_hash(database), retaildb.db_hash(retaildb.fresh_copy())
    wrong_read = {**read, "expected_output": "Error: user not found"}
    invalid_write = {**write, "arguments": {**write["arguments"], "zip": 73301}}
    lines = [
        task("good", [read, write], changed),
        task("wrong-output", [wrong_read, write], changed),
        task("wrong-hash", [read, write], untouched),
        task("invalid", [read, invalid_write], changed),
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_wrong_outputs_hashes_and_arguments_fail(
    definition: AgentDefinition, tmp_path: Path
) -> None:
    report = await replay(definition, broken_tasks(tmp_path))
    kinds = {o.task_id: [(f.kind, f.call_index) for f in o.failures] for o in report.outcomes}
    assert kinds == {
        "good": [],
        "wrong-output": [("output", 0)],
        "wrong-hash": [("hash", None)],
        # The address change never ran, so the hash is the untouched database's.
        "invalid": [("invalid_arguments", 1), ("hash", None)],
    }
    invalid = report.failures[-1].failures[0]
    assert invalid.tool == "modify_user_address" and "'zip' must be string" in invalid.message


def test_documented_command_prints_failures_and_totals(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(PROJECT / "conformance.py"), str(broken_tasks(tmp_path))],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "FAIL wrong-output",
        "FAIL wrong-hash",
        "FAIL invalid",
    ]
    assert lines[-1] == "1 passed, 3 failed"
