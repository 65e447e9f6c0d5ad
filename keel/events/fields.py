"""Typed reading of plain JSON data into value dataclasses (events, buttons, stack frames).

The codec needs one reader per field. Rather than hand-writing a decoder per event kind,
the reader is derived once per class from the declared field types, which are limited to
the small set handled here; a class with any other field type fails loudly when its
reader is first built (a test builds them all).

Decoding runs for every stored event read, so readers check exact types first (what
`json.loads` produces) and build error paths only when something is wrong.
"""

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping
from typing import Literal

from keel.events.base import JsonMapping, JsonValue
from keel.events.errors import MalformedEvent

Reader = Callable[[object], object]
"""Reads one JSON value into a field value; raises `_Invalid` when it cannot."""


class _Invalid(Exception):
    """Internal: a value was rejected. `detail` continues the path, e.g. `[0].title: ...`."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _wrong(expected: str, value: object) -> _Invalid:
    return _Invalid(f": expected {expected}, got {type(value).__name__}")


def _read_str(value: object) -> object:
    if type(value) is str or isinstance(value, str):
        return value
    raise _wrong("a string", value)


def _read_int(value: object) -> object:
    if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _wrong("an integer", value)


def _read_float(value: object) -> object:
    kind = type(value)
    if kind is float or kind is int or (isinstance(value, int | float) and kind is not bool):
        number = float(value)  # type: ignore[arg-type]
        if math.isfinite(number):
            return number
        raise _wrong("a finite number", value)
    raise _wrong("a number", value)


def _read_bool(value: object) -> object:
    if type(value) is bool:
        return value
    raise _wrong("a boolean", value)


def _optional(read: Reader) -> Reader:
    def read_optional(value: object) -> object:
        return None if value is None else read(value)

    return read_optional


def _read_json(value: object) -> object:
    # Passed through as is: building the event deep-freezes and checks JSON values, and
    # the codec turns a `NotJsonValue` from that into `MalformedEvent`.
    return value


def _read_json_mapping(value: object) -> object:
    if type(value) is dict or isinstance(value, Mapping):
        return value
    raise _wrong("an object", value)


_SIMPLE: dict[object, Reader] = {
    str: _read_str,
    int: _read_int,
    float: _read_float,
    bool: _read_bool,
    str | None: _optional(_read_str),
    int | None: _optional(_read_int),
    float | None: _optional(_read_float),
    JsonValue: _read_json,
    JsonMapping: _read_json_mapping,
}


_SCALARS = (str, int, float, bool)
"""Item types allowed in `tuple[X, ...]` fields besides value dataclasses."""


def _literal_reader(allowed: tuple[object, ...]) -> Reader:
    def read_literal(value: object) -> object:
        if isinstance(value, str) and value in allowed:
            return value
        raise _Invalid(f": expected one of {list(allowed)}, got {value!r}")

    return read_literal


def _dataclass_reader(cls: type) -> Reader:
    def read_dataclass(value: object) -> object:
        return _read_value(cls, value)

    return read_dataclass


def _tuple_reader(read_item: Reader) -> Reader:
    def read_tuple(value: object) -> object:
        if not isinstance(value, list | tuple):
            raise _wrong("an array", value)
        items: list[object] = []
        for index, item in enumerate(value):
            try:
                items.append(read_item(item))
            except _Invalid as exc:
                raise _Invalid(f"[{index}]{exc.detail}") from None
        return tuple(items)

    return read_tuple


def reader_for(tp: object) -> Reader:
    """The reader for one declared field type; raises TypeError for unsupported types."""
    simple = _SIMPLE.get(tp)
    if simple is not None:
        return simple
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return _literal_reader(args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return _tuple_reader(_dataclass_reader(item))
        if item in _SCALARS:
            return _tuple_reader(_SIMPLE[item])
    raise TypeError(f"no JSON reader for field type {tp!r}")


@dataclasses.dataclass(frozen=True, slots=True)
class _Spec:
    fields: tuple[tuple[str, Reader, bool], ...]
    """(name, reader, required) per field."""

    allowed: frozenset[str]


_SPECS: dict[tuple[type, frozenset[str]], _Spec] = {}


def _spec(cls: type, ignore: frozenset[str]) -> _Spec:
    spec = _SPECS.get((cls, ignore))
    if spec is None:
        fields = tuple(
            (
                f.name,
                reader_for(f.type),
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
        )
        spec = _Spec(fields=fields, allowed=frozenset(name for name, _, _ in fields) | ignore)
        _SPECS[(cls, ignore)] = spec
    return spec


def field_specs(cls: type) -> tuple[tuple[str, Reader, bool], ...]:
    """(name, reader, required) for each field of dataclass `cls`; built once per class."""
    return _spec(cls, frozenset()).fields


def _read_fields(
    cls: type, data: Mapping[str, object], ignore: frozenset[str]
) -> dict[str, object]:
    spec = _spec(cls, ignore)
    if not data.keys() <= spec.allowed:
        raise _Invalid(f": unexpected field(s) {sorted(data.keys() - spec.allowed)}")
    kwargs: dict[str, object] = {}
    for name, read, required in spec.fields:
        if name in data:
            try:
                kwargs[name] = read(data[name])
            except _Invalid as exc:
                raise _Invalid(f".{name}{exc.detail}") from None
        elif required:
            raise _Invalid(f": missing field {name!r}")
    return kwargs


def _read_value(cls: type, data: object) -> object:
    if not isinstance(data, Mapping):
        raise _wrong("an object", data)
    build: Callable[..., object] = cls
    return build(**_read_fields(cls, data, frozenset()))


def read_fields(
    cls: type, data: Mapping[str, object], path: str, *, ignore: frozenset[str] = frozenset()
) -> dict[str, object]:
    """Read `data` into constructor keyword arguments for dataclass `cls`.

    Every key must be a field of `cls` (or listed in `ignore`); missing optional fields
    take their defaults; missing required fields are an error. Errors are
    `MalformedEvent`, their message starting with `path`.
    """
    try:
        return _read_fields(cls, data, ignore)
    except _Invalid as exc:
        raise MalformedEvent(f"{path}{exc.detail}") from None
