"""Await a tool or hook call under a deadline, turning its failures into values.

Three outcomes: it finished (`Finished`), it raised an `Exception` (`Raised`), or the deadline
passed (`TimedOut`). A cancellation of the calling task is never turned into a value: it
propagates, even when the called code swallowed the `CancelledError` it saw at its `await`
(the task's pending cancellation count tells). A `CancelledError` the called code raises
while nobody cancelled this task (it awaited something that another party cancelled) is the
tool's failure, not a cancellation of the turn, and comes back as `Raised`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class Finished:
    """The call returned `value`."""

    value: object


@dataclass(frozen=True, kw_only=True, slots=True)
class Raised:
    """The call raised `error`."""

    error: BaseException


@dataclass(frozen=True, kw_only=True, slots=True)
class TimedOut:
    """The deadline passed before the call finished (it was cancelled)."""


Outcome = Finished | Raised | TimedOut


async def guarded(call: Callable[[], Awaitable[object]], timeout: float) -> Outcome:
    """Await `call()` for at most `timeout` seconds; CancelledError of this task propagates."""
    task = asyncio.current_task()
    cancelling_before = task.cancelling() if task is not None else 0
    deadline = asyncio.timeout(timeout)
    outcome: Outcome
    try:
        async with deadline:
            value = await call()
    except asyncio.CancelledError as exc:
        if task is None or task.cancelling() > cancelling_before:
            raise
        outcome = Raised(error=exc)
    except Exception as exc:
        # Whatever follows the deadline's own cancellation is the timeout; a TimeoutError
        # raised by the tool itself before the deadline is an ordinary error.
        outcome = TimedOut() if deadline.expired() else Raised(error=exc)
    else:
        outcome = Finished(value=value)
    if task is not None and task.cancelling() > cancelling_before:
        # Someone cancelled this task and the called code swallowed it: honour the cancel.
        raise asyncio.CancelledError
    return outcome


def describe_exception(error: BaseException) -> str:
    """`"<ExceptionType>: <message>"` (just the type when the message is empty); no traceback."""
    try:
        text = str(error)
    except Exception:
        text = ""
    name = type(error).__name__
    return f"{name}: {text}" if text else name


def seconds(timeout: float) -> str:
    """A timeout as people write it: 10, 0.5."""
    return f"{timeout:g}"
