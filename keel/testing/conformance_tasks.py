"""The tasks file of a conformance replay: JSON Lines, one τ-bench task per line.

    {"id": "retail-test-0",
     "actions": [{"name": "...", "arguments": {...}, "expected_output": "..."}, ...],
     "final_db_hash": "<64 hex digits>"}

Other keys are ignored. A line that is not a task in this format is read as `Malformed`
(named by its `id` when it has one, else `line <n>`); nothing here raises for bad content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True, slots=True)
class GoldCall:
    """One gold tool call of a task."""

    name: str
    arguments: Mapping[str, object]
    expected_output: str


@dataclass(frozen=True, kw_only=True, slots=True)
class GoldTask:
    """One task: its gold calls in order and the database hash after them."""

    task_id: str
    calls: tuple[GoldCall, ...]
    final_db_hash: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Malformed:
    """A line of the tasks file that is not a task."""

    task_id: str
    """The task's `id` when it could be read, else `line <n>`."""
    message: str


def read_tasks(tasks_file: Path) -> list[GoldTask | Malformed]:
    """Every non-blank line of `tasks_file` as a task or a `Malformed` (raises `OSError`)."""
    entries: list[GoldTask | Malformed] = []
    text = tasks_file.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            entries.append(parse_task(line, number))
    return entries


def parse_task(line: str, number: int) -> GoldTask | Malformed:
    """One JSON line as a task; `Malformed` says what is wrong with it."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        return Malformed(task_id=f"line {number}", message=f"line {number}: not JSON ({exc})")
    if not isinstance(data, dict):
        return Malformed(task_id=f"line {number}", message=f"line {number}: not a JSON object")
    task_id = data.get("id")
    name = task_id if isinstance(task_id, str) and task_id else f"line {number}"
    actions = data.get("actions")
    final = data.get("final_db_hash")
    if not isinstance(actions, list) or not isinstance(final, str):
        message = f"line {number}: needs an 'actions' list and a 'final_db_hash' string"
        return Malformed(task_id=name, message=message)
    calls: list[GoldCall] = []
    for index, action in enumerate(actions):
        call = _gold_call(action)
        if call is None:
            message = (
                f"line {number}: action {index} needs 'name' (string), 'arguments' (object) "
                "and 'expected_output' (string)"
            )
            return Malformed(task_id=name, message=message)
        calls.append(call)
    return GoldTask(task_id=name, calls=tuple(calls), final_db_hash=final)


def _gold_call(action: object) -> GoldCall | None:
    if not isinstance(action, dict):
        return None
    name, arguments, expected = (action.get(k) for k in ("name", "arguments", "expected_output"))
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    if not isinstance(expected, str):
        return None
    return GoldCall(name=name, arguments=arguments, expected_output=expected)
