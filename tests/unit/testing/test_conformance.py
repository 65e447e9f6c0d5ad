"""`keel.testing.conformance`: gold tool calls replayed through Keel's tool dispatch path.

A tiny project on disk (a counter database in a project-level module, shared tools) is
replayed with tasks that pass, that expect another output, that send invalid arguments (the
tool must not run), that name a missing tool, that end with another database, and with a
line that is not a task. The model-visible text the runner compares is checked against what
the turn loop really sends the model.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from keel.errors import DefinitionError
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.conformance import (
    ConformanceReport,
    main,
    output_diff,
    run_conformance,
)
from keel.tools import run_tool

AGENT = "agent:\n  persona: You count things.\n"
INTEGRATIONS = """\
llm:
  model_group: main
model_groups:
  - id: main
    models:
      - provider: openai
        model: gpt-4.1
"""
DB_MODULE = """\
import hashlib
import json

STATE: dict[str, object] = {"n": 0, "labels": []}
RUNS: list[str] = []


def reset() -> None:
    STATE.clear()
    STATE.update({"n": 0, "labels": []})


def db_hash() -> str:
    text = json.dumps(STATE, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
"""
TOOLS = """\
from countdb import RUNS, STATE
from keel.tools import ToolResult, tool


@tool(description="Add to the counter and remember the labels.")
async def add(amount: int, labels: list[str]) -> ToolResult:
    RUNS.append("add")
    STATE["n"] += amount
    STATE["labels"] += labels
    return ToolResult(llm_response=str(STATE["n"]))


@tool(description="Refuse, with the error text a reference tool returns.")
async def refuse(reason: str) -> ToolResult:
    return ToolResult(error=reason, llm_response=f"Error: {reason}")


@tool(description="Refuse with the whole text as the error.")
async def refuse_prefixed(reason: str) -> ToolResult:
    return ToolResult(error=f"Error: {reason}")


@tool(description="Refuse with the bare message as the error.")
async def refuse_bare(reason: str) -> ToolResult:
    return ToolResult(error=reason)
"""
SKILL = """\
---
name: Count
description: Count things.
import_tools:
  - add
  - refuse
---
Use the counter tools.
"""


def state_hash(n: int, labels: list[str]) -> str:
    text = json.dumps({"labels": labels, "n": n}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def countdb() -> Any:
    return sys.modules["countdb"]


def reset() -> None:
    countdb().reset()


def db_hash() -> str:
    result: str = countdb().db_hash()
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "counter"
    (root / "tools").mkdir(parents=True)
    (root / "skills" / "count").mkdir(parents=True)
    (root / "agent.yml").write_text(AGENT, encoding="utf-8")
    (root / "integrations.yml").write_text(INTEGRATIONS, encoding="utf-8")
    (root / "countdb.py").write_text(DB_MODULE, encoding="utf-8")
    (root / "tools" / "counter.py").write_text(TOOLS, encoding="utf-8")
    (root / "skills" / "count" / "skill.md").write_text(SKILL, encoding="utf-8")
    return root


def task(task_id: str, actions: list[tuple[str, dict[str, object], str]], final: str) -> str:
    return json.dumps(
        {
            "id": task_id,
            "actions": [
                {"name": name, "arguments": arguments, "expected_output": output}
                for name, arguments, output in actions
            ],
            "final_db_hash": final,
        }
    )


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"text": None, "tool_calls": [{"name": name, "arguments": arguments}]}


def write_tasks(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


PASSING = task(
    "pass",
    [
        ("add", {"amount": 2, "labels": ["a"]}, "2"),
        ("add", {"amount": 3, "labels": ["b", "c"]}, "5"),
        ("refuse", {"reason": "user not found"}, "Error: user not found"),
    ],
    state_hash(5, ["a", "b", "c"]),
)
WRONG_OUTPUT = task("wrong-output", [("add", {"amount": 1, "labels": []}, "7")], state_hash(1, []))
WRONG_HASH = task("wrong-hash", [("add", {"amount": 1, "labels": []}, "1")], state_hash(9, []))
INVALID = task(
    "invalid",
    [("add", {"amount": "two", "labels": "x", "extra": 1}, "2")],
    state_hash(0, []),  # the tool never ran
)
# The model would see "Error: Error: gone" when it called the tool itself.
PREFIXED = task(
    "prefixed", [("refuse_prefixed", {"reason": "gone"}, "Error: gone")], state_hash(0, [])
)
# Keel adds the "Error: " itself, on every path.
BARE = task("bare", [("refuse_bare", {"reason": "gone"}, "Error: gone")], state_hash(0, []))
UNKNOWN = task("unknown", [("subtract", {"amount": 1}, "0")], state_hash(0, []))


def test_passing_and_failing_tasks_are_reported_per_call(project: Path, tmp_path: Path) -> None:
    tasks = write_tasks(
        tmp_path, PASSING, WRONG_OUTPUT, WRONG_HASH, INVALID, UNKNOWN, "", "not json"
    )
    report = run_conformance(project_root=project, tasks_file=tasks, reset=reset, db_hash=db_hash)
    assert isinstance(report, ConformanceReport)
    assert [o.task_id for o in report.outcomes] == [
        "pass",
        "wrong-output",
        "wrong-hash",
        "invalid",
        "unknown",
        "line 7",
    ]
    assert (report.passed, report.failed, report.calls) == (1, 5, 7)
    by_id = {o.task_id: o for o in report.outcomes}
    assert by_id["pass"].passed
    [output] = by_id["wrong-output"].failures
    assert (output.kind, output.call_index, output.tool) == ("output", 0, "add")
    assert 'expected …"7"… got …"1"…' in output.message
    [hashed] = by_id["wrong-hash"].failures
    assert hashed.kind == "hash" and state_hash(1, []) in hashed.message
    [invalid] = by_id["invalid"].failures
    assert invalid.kind == "invalid_arguments"
    assert "argument 'amount' must be integer" in invalid.message
    assert "unexpected argument 'extra'" in invalid.message
    assert countdb().RUNS.count("add") == 4  # pass x2, wrong-output, wrong-hash: not invalid
    assert by_id["unknown"].failures[0].kind == "unknown_tool"
    assert by_id["line 7"].failures[0].kind == "malformed"


def test_main_prints_a_line_per_failing_task_and_the_totals(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write_tasks(tmp_path, PASSING, WRONG_OUTPUT, INVALID)
    code = main([str(tasks)], project_root=project, reset=reset, db_hash=db_hash)
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith("FAIL wrong-output: call 0 (add): output differs at char 0")
    assert lines[1].startswith("FAIL invalid: call 0 (add): invalid arguments: ")
    assert lines[-1] == "1 passed, 2 failed"
    assert len(lines) == 3


def test_main_passes_only_when_every_task_passes(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write_tasks(tmp_path, PASSING, WRONG_OUTPUT)
    args = {"project_root": project, "reset": reset, "db_hash": db_hash}
    assert main([str(tasks), "--task", "pass"], **args) == 0  # type: ignore[arg-type]
    assert capsys.readouterr().out.splitlines() == ["1 passed, 0 failed"]
    assert main([], default_files=[tasks], **args) == 1  # type: ignore[arg-type]
    assert main([str(tasks), "--task", "nothing"], **args) == 1  # type: ignore[arg-type]
    assert main([str(tmp_path / "missing.jsonl")], **args) == 2  # type: ignore[arg-type]


def test_a_broken_project_is_refused_with_its_diagnostics(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "tools" / "counter.py").write_text("def broken(:\n", encoding="utf-8")
    tasks = write_tasks(tmp_path, PASSING)
    with pytest.raises(DefinitionError):
        run_conformance(project_root=project, tasks_file=tasks, reset=reset, db_hash=db_hash)
    assert main([str(tasks)], project_root=project, reset=reset, db_hash=db_hash) == 2
    assert "tool.module.syntax_error" in capsys.readouterr().err


def test_keel_prefixes_an_error_once(project: Path, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, PREFIXED, BARE)
    report = run_conformance(project_root=project, tasks_file=tasks, reset=reset, db_hash=db_hash)
    prefixed, bare = report.outcomes
    assert 'got …"Error: Error: gone"…' in prefixed.failures[0].message
    assert bare.failures == ()


def test_output_diff_points_at_the_first_difference() -> None:
    assert output_diff("abcdef", "abcxef").startswith("output differs at char 3 (expected 6")
    assert "char 3" in output_diff("abc", "abcd")


async def test_compared_text_is_what_the_turn_loop_sends_the_model(project: Path) -> None:
    model = ScriptedModel(
        [
            call("activate", {"target_id": "count"}),
            call("refuse", {"reason": "nope"}),
            call("add", {"amount": 4, "labels": []}),
            "Done.",
        ]
    )
    harness = ConversationHarness(project, model)
    countdb().reset()
    await harness.send("count please")
    model.assert_complete()
    sent = [m for m in model.requests[-1].messages if m["role"] == "tool"]
    tools = harness.definition.shared_tools
    countdb().reset()
    refused = await run_tool(tools["refuse"], {"reason": "nope"}, context=None, timeout=5)
    added = await run_tool(tools["add"], {"amount": 4, "labels": []}, context=None, timeout=5)
    assert [m["content"] for m in sent[-2:]] == [refused.result_text, added.result_text]
    assert refused.result_text == "Error: nope" and refused.is_error
