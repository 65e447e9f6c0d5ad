"""Deep read-only copies of JSON values, so a tool schema shared by every conversation stays put."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


def freeze_json(value: object) -> object:
    """`value` with lists turned into tuples and dicts into read-only mappings."""
    if isinstance(value, list | tuple):
        return tuple(freeze_json(item) for item in value)
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze_json(item) for key, item in value.items()})
    return value


def thaw_json(value: object) -> Any:
    """A fresh plain copy of a frozen value (tuples to lists, mappings to dicts)."""
    # Exact types first (the usual ones), without the ABC checks below.
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or value is None:
        return value
    if kind is dict or kind is MappingProxyType:
        return {key: thaw_json(item) for key, item in value.items()}  # type: ignore[attr-defined]
    if isinstance(value, list | tuple):
        return [thaw_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: thaw_json(item) for key, item in value.items()}
    return value
