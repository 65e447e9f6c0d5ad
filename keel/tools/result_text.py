"""The text a model sees for a tool's `llm_response`."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping


def to_result_text(value: object) -> str:
    """`value` as tool-output text: a str unchanged, None as "", anything else as compact
    JSON with sorted keys (read-only mappings, tuples, sets, enums and dataclass instances
    included); `str(value)` when it cannot be JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(
            value,
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
            default=_jsonable,
        )
    except (TypeError, ValueError, RecursionError):
        return _plain_str(value)


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON")


def _plain_str(value: object) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"
