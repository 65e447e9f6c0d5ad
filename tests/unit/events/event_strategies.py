"""Hypothesis strategies for every event kind, derived from the declared field types."""

import dataclasses
import typing
from typing import Literal

from hypothesis import strategies as st

from keel.events.base import JsonMapping, JsonValue
from keel.events.model import EVENT_TYPES, Event

json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
json_mappings = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
texts = st.text(max_size=12)
floats = st.floats(allow_nan=False, allow_infinity=False)

_SIMPLE: dict[object, st.SearchStrategy[object]] = {
    str: texts,
    int: st.integers(),
    float: floats,
    bool: st.booleans(),
    str | None: st.none() | texts,
    int | None: st.none() | st.integers(),
    float | None: st.none() | floats,
    JsonValue: json_values,
    JsonMapping: json_mappings,
}


def for_type(tp: object) -> st.SearchStrategy[object]:
    """A strategy for one declared field type (the same set the codec supports)."""
    if tp in _SIMPLE:
        return _SIMPLE[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return st.sampled_from(args)
    if origin is tuple:
        item = _SIMPLE[args[0]] if args[0] in _SIMPLE else for_class(args[0])
        return st.lists(item, max_size=3).map(tuple)
    raise TypeError(f"no strategy for {tp!r}")


def for_class(cls: type) -> st.SearchStrategy[typing.Any]:
    """Instances of dataclass `cls` with every field drawn, optional ones included."""
    return st.builds(cls, **{f.name: for_type(f.type) for f in dataclasses.fields(cls)})


def events_of(kinds: typing.Iterable[str] | None = None) -> st.SearchStrategy[Event]:
    """Any event of the given kinds (all kinds by default)."""
    names = sorted(EVENT_TYPES) if kinds is None else sorted(kinds)
    return st.one_of([for_class(EVENT_TYPES[name]) for name in names])


any_event = events_of()
