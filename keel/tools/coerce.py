"""Turn validated JSON arguments into the Python types a tool's signature names.

The schema offered to the model came from the annotations (`keel.tools.schema`), so a tool
annotated `colour: Colour` (an Enum) or `address: Address` (a dataclass) would otherwise
receive a str or a dict. Converted: Enum members (by value), Literal members that are Enum
members, dataclasses (field by field, recursively), TypedDict values, list / Sequence,
tuple (homogeneous or fixed), set / frozenset, dict / Mapping values, `X | None` with one
other member, an integral float for `int` and an int for `float`. Anything else (unions of
several types, `Any`, unannotated parameters) is passed through unchanged.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from keel.tools.definition import ToolDefinition, ToolDefinitionError
from keel.tools.schema import resolve_annotation

_UNIONS: frozenset[object] = frozenset({typing.Union, types.UnionType})
_WRAPPERS: frozenset[object] = frozenset({typing.Annotated, typing.Required, typing.NotRequired})
_LISTS: frozenset[object] = frozenset(
    {list, collections.abc.Sequence, collections.abc.MutableSequence}
)
_SETS: dict[object, Callable[[list[object]], object]] = {
    set: set,
    frozenset: frozenset,
    collections.abc.Set: frozenset,
    collections.abc.MutableSet: set,
}
_DICTS: frozenset[object] = frozenset(
    {dict, collections.abc.Mapping, collections.abc.MutableMapping}
)


def coerce_arguments(
    definition: ToolDefinition, arguments: Mapping[str, object]
) -> dict[str, object]:
    """`arguments` converted parameter by parameter (see the module docstring).

    Expects arguments that passed `validate_arguments`; whatever a dataclass constructor
    raises (a `__post_init__` check, say) propagates.
    """
    types_by_name, converted = _parameter_types(definition.func)
    # A parameter whose type converts nothing (`str`, `bool`, unannotated...) gets its
    # value as it is, without asking `_coerce` (what most arguments are); so does an
    # argument the signature does not name (its type would be `Any`).
    return {
        name: _coerce(types_by_name[name], value) if name in converted else value
        for name, value in arguments.items()
    }


_AS_IS = (str, bool, object, type(None), Any)
"""Types `_coerce` returns every JSON value of unchanged."""


@lru_cache(maxsize=256)
def _parameter_types(
    func: Callable[..., object],
) -> tuple[Mapping[str, object], frozenset[str]]:
    """Each parameter's type, and the parameters whose values `_coerce` may convert."""
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return MappingProxyType({}), frozenset()
    resolved: dict[str, object] = {}
    for name, parameter in parameters.items():
        try:
            resolved[name] = resolve_annotation(func, name, parameter.annotation)
        except ToolDefinitionError:
            resolved[name] = Any
    converted = frozenset(name for name, tp in resolved.items() if not any(tp is t for t in _AS_IS))
    return MappingProxyType(resolved), converted


def _coerce(tp: object, value: object) -> object:
    origin = typing.get_origin(tp)
    if origin is None:
        return _by_class(tp, value) if isinstance(tp, type) else value
    args = typing.get_args(tp)
    if origin in _WRAPPERS:
        return _coerce(args[0], value)
    if origin in _UNIONS:
        others = [a for a in args if a is not type(None)]
        return value if value is None or len(others) != 1 else _coerce(others[0], value)
    if origin is typing.Literal:
        return next((a for a in args if isinstance(a, enum.Enum) and a.value == value), value)
    return _container(origin, args, value)


def _container(origin: object, args: tuple[Any, ...], value: object) -> object:
    if isinstance(value, dict):
        if origin in _DICTS and len(args) == 2:
            return {key: _coerce(args[1], item) for key, item in value.items()}
        return value
    if not isinstance(value, list):
        return value
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], item) for item in value)
        if len(args) == len(value):
            return tuple(_coerce(tp, item) for tp, item in zip(args, value, strict=True))
        return tuple(value)
    items = [_coerce(args[0] if args else Any, item) for item in value]
    if origin in _LISTS:
        return items
    make = _SETS.get(origin)
    return make(items) if make is not None else value


def _by_class(tp: type, value: object) -> object:
    if tp is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if issubclass(tp, enum.Enum):
        return _enum(tp, value)
    if isinstance(value, dict) and (_is_typeddict(tp) or dataclasses.is_dataclass(tp)):
        return _record(tp, value)
    if isinstance(value, list) and (tp is tuple or tp in _SETS):
        return tuple(value) if tp is tuple else _SETS[tp](value)
    return value


def _enum(tp: type[enum.Enum], value: object) -> object:
    if isinstance(value, tp):
        return value
    try:
        return tp(value)
    except ValueError:
        return value


def _record(tp: type, value: dict[str, object]) -> object:
    try:
        hints = typing.get_type_hints(tp, include_extras=True)
    except Exception:
        hints = {}
    fields = {key: _coerce(hints.get(key, Any), item) for key, item in value.items()}
    return fields if _is_typeddict(tp) else tp(**fields)


def _is_typeddict(tp: type) -> bool:
    return typing.is_typeddict(tp) or (issubclass(tp, dict) and hasattr(tp, "__required_keys__"))
