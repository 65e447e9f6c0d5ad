"""Evaluating a parsed condition against memory, with Python semantics, failing closed.

Memory is read through a `MemoryReader` callable (`read_from_mapping` builds one from a
mapping). Every reference is read before anything is evaluated, so an unreadable reference
closes the condition even where Python would short-circuit past it (`True or session.x.y`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import TypeAlias

from keel.conditions.condition import Condition
from keel.conditions.errors import Unreadable
from keel.conditions.names import Reference

MemoryReader: TypeAlias = Callable[[Reference], object]
"""Returns the current value of a reference, None when unset; raises `Unreadable` when the
caller may not read it."""


def read_from_mapping(
    values: Mapping[str, object],
    readable: Callable[[Reference], bool] | None = None,
) -> MemoryReader:
    """A reader over `values` keyed `namespace.entry`; missing keys read as None.

    With `readable`, every reference for which it returns False raises `Unreadable`.
    """

    def read(reference: Reference) -> object:
        if readable is not None and not readable(reference):
            raise Unreadable(reference)
        return values.get(reference.key)

    return read


class Outcome(Enum):
    """The result of evaluating a condition."""

    TRUE = "true"
    FALSE = "false"
    CLOSED = "closed"
    """The condition could not be evaluated; callers treat it as false / hidden / blocked."""


def evaluate(condition: Condition, read: MemoryReader) -> Outcome:
    """TRUE or FALSE by `bool()` of the value, or CLOSED; never raises.

    CLOSED when any reference cannot be read (the reader raises anything) or when Python
    raises while evaluating (`None < 3`, `"a" < 1`, ...).
    """
    # Any Exception means "cannot be evaluated"; BaseException (cancellation, exit) is not
    # ours to swallow.
    try:
        values = [read(reference) for reference in condition._read_order]
    except Exception:
        return Outcome.CLOSED
    try:
        result = bool(condition._program(values))
    except Exception:
        return Outcome.CLOSED
    return Outcome.TRUE if result else Outcome.FALSE


def holds(condition: Condition, read: MemoryReader) -> bool:
    """True only when the condition evaluates to `Outcome.TRUE`."""
    return evaluate(condition, read) is Outcome.TRUE
