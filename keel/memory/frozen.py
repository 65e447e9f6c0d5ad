"""Read-only copies of JSON values, so declared defaults cannot be changed by accident.

Field declarations are shared by every conversation; a list default handed out by
reference could be mutated by one session and leak into the next. Declarations hold
frozen values (tuples, read-only mappings); `thaw` makes a fresh plain copy to use.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


def freeze(value: object) -> object:
    """`value` with lists turned into tuples and dicts into read-only mappings."""
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    return value


def thaw(value: object) -> object:
    """A fresh plain copy of a frozen value (tuples to lists, mappings to dicts)."""
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    return value
