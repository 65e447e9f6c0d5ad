"""What a conformance replay found: per-call failures, per-task outcomes, the file's report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

FailureKind = Literal["malformed", "unknown_tool", "invalid_arguments", "output", "hash"]

_EXCERPT = 40


@dataclass(frozen=True, kw_only=True, slots=True)
class CallFailure:
    """One thing that did not conform."""

    kind: FailureKind
    call_index: int | None
    """0-based index of the call in the task's actions; None for the hash or the line."""
    tool: str | None
    message: str

    def describe(self) -> str:
        """`call 2 (get_order_details): output differs ...`, or the message alone."""
        if self.call_index is None:
            return self.message
        return f"call {self.call_index} ({self.tool}): {self.message}"


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskOutcome:
    """How one task went."""

    task_id: str
    calls: int
    """Gold calls dispatched (all of the task's, since a failing call does not stop it)."""
    failures: tuple[CallFailure, ...]

    @property
    def passed(self) -> bool:
        """True when every output and the final hash matched."""
        return not self.failures

    def summary(self) -> str:
        """One line: the task id, its first failure and how many more there are."""
        if not self.failures:
            return f"PASS {self.task_id}"
        more = len(self.failures) - 1
        tail = f" (+{more} more)" if more else ""
        return f"FAIL {self.task_id}: {self.failures[0].describe()}{tail}"


@dataclass(frozen=True, kw_only=True, slots=True)
class ConformanceReport:
    """Every task of one tasks file, in file order."""

    tasks_file: Path
    outcomes: tuple[TaskOutcome, ...]

    @property
    def passed(self) -> int:
        """Tasks that conformed."""
        return sum(1 for outcome in self.outcomes if outcome.passed)

    @property
    def failed(self) -> int:
        """Tasks that did not (malformed lines included)."""
        return len(self.outcomes) - self.passed

    @property
    def calls(self) -> int:
        """Gold calls dispatched."""
        return sum(outcome.calls for outcome in self.outcomes)

    @property
    def failures(self) -> tuple[TaskOutcome, ...]:
        """The failing tasks."""
        return tuple(outcome for outcome in self.outcomes if not outcome.passed)


def output_diff(expected: str, actual: str) -> str:
    """A short description of where two strings first differ."""
    index = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    start = max(0, index - 10)
    want = json.dumps(expected[start : index + _EXCERPT])
    got = json.dumps(actual[start : index + _EXCERPT])
    return (
        f"output differs at char {index} (expected {len(expected)} chars, got {len(actual)}): "
        f"expected …{want}… got …{got}…"
    )
