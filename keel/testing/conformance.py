"""Replay gold tool calls through Keel's tool dispatch path; check outputs and the database.

For each task of a tasks file (τ-bench JSON Lines, see `keel.testing.conformance_tasks`)
the runner calls `reset()` (a fresh copy of the project's database), then takes every
action the way a model's tool call is taken: the tool is looked up in the loaded project's
catalog, the arguments (sent as JSON text) are validated against the schema Keel offers the
model (invalid ones never reach the tool and fail the task with the validation message),
the tool runs through `run_tool` with a real `ToolContext`, and the text the model would see
must equal `expected_output` byte for byte (both the text of a direct call and that of a
confirmed one, which differ for a failed run unless its `llm_response` carries the text).
After the last action `db_hash()` must equal `final_db_hash`. A failing call does not stop
the task.

    report = run_conformance(project_root=root, tasks_file=path, reset=reset, db_hash=db_hash)
    report.passed, report.failed, report.failures

    # a script: one line per failing task, then "N passed, M failed"
    sys.exit(main(sys.argv[1:], project_root=root, reset=reset, db_hash=db_hash))

A malformed line is a failing task; a project with error diagnostics raises
`DefinitionError` from `run_conformance` (`main` prints the diagnostics and exits 2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from keel.errors import DefinitionError
from keel.project.definition import AgentDefinition
from keel.project.load import load_project
from keel.source.diagnostics import has_errors
from keel.testing.conformance_report import (
    CallFailure,
    ConformanceReport,
    TaskOutcome,
    output_diff,
)
from keel.testing.conformance_tasks import GoldCall, GoldTask, Malformed, read_tasks
from keel.tools import LocalMemory, LocalToolContext, ToolDefinition, run_tool
from keel.tools.validation import validate_arguments

__all__ = [
    "CallFailure",
    "ConformanceReport",
    "GoldCall",
    "GoldTask",
    "Malformed",
    "TaskOutcome",
    "main",
    "output_diff",
    "replay_tasks_file",
    "run_conformance",
]


def load_conformance_project(project_root: Path) -> AgentDefinition:
    """The project at `project_root`; raises `DefinitionError` when it has errors."""
    definition, diagnostics = load_project(project_root)
    if definition is None or has_errors(diagnostics):
        raise DefinitionError([d for d in diagnostics if d.severity == "error"] or diagnostics)
    return definition


def tool_catalog(definition: AgentDefinition) -> dict[str, ToolDefinition]:
    """Tool name -> definition: the shared tools, then skill tools of other names."""
    catalog = dict(definition.shared_tools)
    for skill_id in sorted(definition.skills):
        for name, tool in definition.skills[skill_id].tools.items():
            catalog.setdefault(name, tool)
    return catalog


async def replay_task(
    task: GoldTask,
    catalog: Mapping[str, ToolDefinition],
    *,
    timeout: float,
    db_hash: Callable[[], str],
) -> TaskOutcome:
    """Dispatch the task's calls in order (after the caller's reset) and check everything."""
    failures: list[CallFailure] = []
    for index, call in enumerate(task.calls):
        failure = await _dispatch(task.task_id, index, call, catalog, timeout)
        if failure is not None:
            failures.append(failure)
    found = db_hash()
    if found != task.final_db_hash:
        message = f"final db hash {found} != expected {task.final_db_hash}"
        failures.append(CallFailure(kind="hash", call_index=None, tool=None, message=message))
    return TaskOutcome(task_id=task.task_id, calls=len(task.calls), failures=tuple(failures))


async def _dispatch(
    task_id: str,
    index: int,
    call: GoldCall,
    catalog: Mapping[str, ToolDefinition],
    timeout: float,
) -> CallFailure | None:
    definition = catalog.get(call.name)
    if definition is None:
        message = "the project has no tool of this name"
        return CallFailure(kind="unknown_tool", call_index=index, tool=call.name, message=message)
    # The model sends its arguments as JSON text; they are parsed and checked the same way.
    arguments, problems = validate_arguments(definition, json.dumps(call.arguments))
    if problems or arguments is None:
        message = "invalid arguments: " + "; ".join(p.message for p in problems)
        return CallFailure(
            kind="invalid_arguments", call_index=index, tool=call.name, message=message
        )
    context = LocalToolContext(
        memory=LocalMemory(), sender_id=task_id, conversation_id=f"conformance-{task_id}"
    )
    # As the turn loop does: a tool's own timeout (MCP tools have one) before the agent's.
    run = await run_tool(
        definition, arguments, context=context, timeout=definition.timeout or timeout
    )
    if run.result_text == call.expected_output:
        return None
    message = output_diff(call.expected_output, run.result_text)
    return CallFailure(kind="output", call_index=index, tool=call.name, message=message)


async def replay_tasks_file(
    definition: AgentDefinition,
    tasks_file: Path,
    *,
    reset: Callable[[], None],
    db_hash: Callable[[], str],
    task_ids: Collection[str] = (),
) -> ConformanceReport:
    """Replay every task of `tasks_file` (only `task_ids` when given) against a loaded
    project (raises `OSError`)."""
    catalog = tool_catalog(definition)
    timeout = definition.config.tool_timeout
    outcomes: list[TaskOutcome] = []
    for entry in read_tasks(tasks_file):
        if task_ids and entry.task_id not in task_ids:
            continue
        if isinstance(entry, Malformed):
            failure = CallFailure(
                kind="malformed", call_index=None, tool=None, message=entry.message
            )
            outcomes.append(TaskOutcome(task_id=entry.task_id, calls=0, failures=(failure,)))
            continue
        reset()
        outcomes.append(await replay_task(entry, catalog, timeout=timeout, db_hash=db_hash))
    return ConformanceReport(tasks_file=tasks_file, outcomes=tuple(outcomes))


def run_conformance(
    *,
    project_root: Path,
    tasks_file: Path,
    reset: Callable[[], None],
    db_hash: Callable[[], str],
) -> ConformanceReport:
    """Load the project and replay `tasks_file` (not from inside a running event loop).

    Raises `DefinitionError` for a project with errors and `OSError` for an unreadable file.
    """
    definition = load_conformance_project(project_root)
    return asyncio.run(replay_tasks_file(definition, tasks_file, reset=reset, db_hash=db_hash))


def main(
    argv: Sequence[str] | None,
    *,
    project_root: Path,
    reset: Callable[[], None],
    db_hash: Callable[[], str],
    default_files: Sequence[Path] = (),
) -> int:
    """Command line: `TASKS.jsonl [...] [--task ID ...]`; 0 only when every task passes.

    Prints one line per failing task, `<file>: N passed, M failed` per file when there are
    several, and a final `N passed, M failed`. With no file, `default_files` are replayed;
    `--task` (repeatable) replays only those task ids. Exits 1 when a task fails or none
    ran, 2 for a project with errors or an unreadable file.
    """
    args = _parser().parse_args(argv)
    files = [Path(f) for f in args.files] or list(default_files)
    if not files:
        print("no tasks file given", file=sys.stderr)
        return 2
    try:
        definition = load_conformance_project(project_root)
    except DefinitionError as exc:
        print(f"cannot load the project at {project_root}:", file=sys.stderr)
        for diagnostic in exc.diagnostics:
            print(f"  {diagnostic.render()}", file=sys.stderr)
        return 2
    try:
        reports = asyncio.run(_replay_all(definition, files, reset, db_hash, set(args.task)))
    except OSError as exc:
        print(f"cannot read a tasks file: {exc}", file=sys.stderr)
        return 2
    return _print_reports(reports)


async def _replay_all(
    definition: AgentDefinition,
    files: Sequence[Path],
    reset: Callable[[], None],
    db_hash: Callable[[], str],
    task_ids: Collection[str],
) -> list[ConformanceReport]:
    return [
        await replay_tasks_file(definition, path, reset=reset, db_hash=db_hash, task_ids=task_ids)
        for path in files
    ]


def _print_reports(reports: Sequence[ConformanceReport]) -> int:
    for report in reports:
        for outcome in report.failures:
            print(outcome.summary())
        if len(reports) > 1:
            print(f"{report.tasks_file}: {report.passed} passed, {report.failed} failed")
    passed = sum(report.passed for report in reports)
    failed = sum(report.failed for report in reports)
    print(f"{passed} passed, {failed} failed")
    # Zero tasks checked nothing: that is not a pass.
    return 0 if failed == 0 and passed > 0 else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Replay gold tool calls through Keel's tool dispatch and check the outputs."
    )
    parser.add_argument("files", nargs="*", help="tasks files (JSON Lines)")
    parser.add_argument(
        "--task", action="append", default=[], help="replay only this task id (repeatable)"
    )
    return parser
