"""Converting a raw value to a field's declared type (spec §3.2, §3.5).

Values reach memory from tools (Python values), the LLM (JSON values), ordered blocks
(YAML literals) and `set:` button payloads (always strings), so every type accepts a
sensible string spelling. `None` is accepted by every type: writing it clears the entry.
Results are plain JSON-compatible values (lists, dicts, str, int, float, bool, None).

A `json` field parses string input that is JSON text (`'{"a": 1}'`, `'42'`) and keeps any
other string as a string; to store a string that looks like JSON, pass it JSON-encoded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from keel.memory.schema import FieldType, MemoryField


@dataclass(frozen=True, kw_only=True, slots=True)
class CoerceResult:
    """Either a coerced value (`ok`) or the reason the raw value was refused."""

    ok: bool
    value: object = None
    """The coerced value when `ok`; None otherwise."""
    error: str | None = None
    """Why the value was refused, for a person (or the LLM); None when `ok`."""

    @classmethod
    def success(cls, value: object) -> CoerceResult:
        """An accepted value."""
        return cls(ok=True, value=value)

    @classmethod
    def failure(cls, error: str) -> CoerceResult:
        """A refused value."""
        return cls(ok=False, error=error)


_TRUE: Final = frozenset({"true", "yes", "1"})
_FALSE: Final = frozenset({"false", "no", "0"})
_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_TEXT: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


class _NotJson(Exception):
    """Internal: a value (or a part of it) has no JSON form."""


def _show(raw: object) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def _to_json(raw: object) -> object:
    """`raw` as a plain JSON value (tuples become lists, mappings dicts)."""
    if raw is None or isinstance(raw, str | bool | int):
        return raw
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise _NotJson(f"{raw!r} is not a finite number")
        return raw
    if isinstance(raw, list | tuple):
        return [_to_json(item) for item in raw]
    if isinstance(raw, Mapping):
        result: dict[str, object] = {}
        for key, item in raw.items():
            if not isinstance(key, str):
                raise _NotJson(f"object key {key!r} is not a string")
            result[key] = _to_json(item)
        return result
    raise _NotJson(f"{type(raw).__name__} values cannot be stored")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON here")


def _parse_json(text: str) -> object:
    """Strict JSON parse (no NaN/Infinity); raises ValueError."""
    return json.loads(text, parse_constant=_reject_constant)


def _number_text(raw: str) -> float | int | None:
    text = raw.strip()
    try:
        if _INT_TEXT.match(text):
            return int(text)
        if _FLOAT_TEXT.match(text):
            return float(text)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        pass
    return None


def _as_text(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    if isinstance(raw, str):
        return CoerceResult.success(raw)
    if isinstance(raw, bool):
        return CoerceResult.success("true" if raw else "false")
    if isinstance(raw, int) or (isinstance(raw, float) and math.isfinite(raw)):
        return CoerceResult.success(str(raw))
    return CoerceResult.failure(f"expected text, got {_show(raw)}")


def _as_bool(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    if isinstance(raw, bool):
        return CoerceResult.success(raw)
    if isinstance(raw, int) and raw in (0, 1):
        return CoerceResult.success(raw == 1)
    if isinstance(raw, str):
        word = raw.strip().casefold()
        if word in _TRUE:
            return CoerceResult.success(True)
        if word in _FALSE:
            return CoerceResult.success(False)
    return CoerceResult.failure(f"expected a boolean (true/false/yes/no/1/0), got {_show(raw)}")


def _as_int(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    number: object = _number_text(raw) if isinstance(raw, str) else raw
    if isinstance(number, float) and math.isfinite(number) and number.is_integer():
        number = int(number)
    if not isinstance(number, int) or isinstance(number, bool):
        return CoerceResult.failure(f"expected a whole number, got {_show(raw)}")
    # `enum_values` on an int entry limit it like a categorical one (Mantle enforces them).
    if enum_values and number not in {_number_text(v) for v in enum_values}:
        return CoerceResult.failure(f"expected one of {', '.join(enum_values)}; got {_show(raw)}")
    return CoerceResult.success(number)


def _as_float(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    number: object = _number_text(raw) if isinstance(raw, str) else raw
    if isinstance(number, int | float) and not isinstance(number, bool):
        try:
            value = float(number)
        except OverflowError:
            value = math.inf
        if math.isfinite(value):
            return CoerceResult.success(value)
    return CoerceResult.failure(f"expected a number, got {_show(raw)}")


def _as_list(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    candidate = raw
    if isinstance(raw, str):
        try:
            candidate = _parse_json(raw)
        except ValueError:
            return CoerceResult.failure(f"expected a list or a JSON array, got {_show(raw)}")
    if not isinstance(candidate, list | tuple):
        return CoerceResult.failure(f"expected a list or a JSON array, got {_show(raw)}")
    return _as_any(candidate, enum_values)


def _as_json(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    if isinstance(raw, str):
        try:
            return CoerceResult.success(_parse_json(raw))
        except ValueError:
            # Not JSON text: a plain string is a JSON value in its own right.
            return CoerceResult.success(raw)
    return _as_any(raw, enum_values)


def _as_categorical(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    if isinstance(raw, str) or (isinstance(raw, int | float) and not isinstance(raw, bool)):
        wanted = str(raw).strip().casefold()
        for allowed in enum_values:
            if allowed.casefold() == wanted:
                return CoerceResult.success(allowed)
    choices = ", ".join(enum_values) if enum_values else "(none declared)"
    return CoerceResult.failure(f"expected one of {choices}; got {_show(raw)}")


def _as_any(raw: object, enum_values: tuple[str, ...]) -> CoerceResult:
    try:
        return CoerceResult.success(_to_json(raw))
    except _NotJson as exc:
        return CoerceResult.failure(str(exc))


_COERCERS: Final[Mapping[FieldType, Callable[[object, tuple[str, ...]], CoerceResult]]] = {
    "text": _as_text,
    "bool": _as_bool,
    "int": _as_int,
    "float": _as_float,
    "list": _as_list,
    "json": _as_json,
    "categorical": _as_categorical,
    "any": _as_any,
}


def coerce_value(type_: FieldType, raw: object, enum_values: tuple[str, ...] = ()) -> CoerceResult:
    """Convert `raw` to `type_`; `enum_values` matter for `categorical` and `int` only.

    Categorical matching ignores case and surrounding spaces and returns the declared
    spelling. `None` is always accepted (it clears the entry).
    """
    if raw is None:
        return CoerceResult.success(None)
    return _COERCERS[type_](raw, enum_values)


def coerce(field: MemoryField, raw: object) -> CoerceResult:
    """Convert `raw` to the declared type of `field` (see `coerce_value`)."""
    return coerce_value(field.type, raw, field.enum_values)
