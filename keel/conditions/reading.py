"""How the evaluator reads memory: a `MemoryReader` callable, and one built from a mapping."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

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
