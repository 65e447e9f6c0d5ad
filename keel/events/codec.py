"""JSON encoding of events, versioned, and JSONL helpers for whole logs.

An encoded event is a flat JSON object: `type` (the kind's wire name), `v` (the schema
version it was written with), the payload fields, then `timestamp` and `metadata`.
Nested values are plain JSON: buttons and stack frames are objects of their fields.
"""

import dataclasses
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

import orjson

from keel.events.base import EMPTY, EncodedTuple, JsonMapping, NotJsonValue, to_plain
from keel.events.errors import (
    EventDecodeError,
    MalformedEvent,
    UnknownEventKind,
    UnsupportedSchemaVersion,
)
from keel.events.fields import read_fields
from keel.events.model import EVENT_TYPES, Event

# Versioning policy (style rule 11): every persisted event carries `v`. Any change to the
# persisted shape (a kind added, renamed or removed; a field added, renamed, removed or
# retyped) bumps SCHEMA_VERSION, adds a line to SCHEMA_VERSIONS and adds an upcaster from the
# previous version to UPCASTERS, plus a frozen fixture tests/fixtures/event_log/v<N>.jsonl
# (holding every kind of version N) with its recorded fold v<N>.state.json, and the kinds of
# version N in the fixture test's KINDS_AT_VERSION.
# Old fixtures are never edited or regenerated: they prove old logs still decode.
# Readers reject events from the future (v > SCHEMA_VERSION) rather than guess.
SCHEMA_VERSION = 8

SCHEMA_VERSIONS: Mapping[int, str] = MappingProxyType(
    {
        1: "initial vocabulary: seed 001 skill/tool/memory events, ordered_block_*, flow_*, "
        "mcp_tool_executed, slot_set, stack_changed (full stack), step_advanced, pause points, "
        "session/message/turn events, conversation_state_changed, model_called, stage_timed",
        2: "adds tool_call_refused",
        3: "adds routing_decided and history_compressed",
        4: "adds error_code to tool_executed and mcp_tool_executed (MCP tools)",
        5: "adds plan_cache_decided and plan_executed (the plan cache) and the `plan` "
        "response source",
        6: "adds cached_input_tokens and cache_write_tokens to model_called (prompt caching)",
        7: "adds barge_in (voice channels)",
        8: "adds stages_timed (a turn's stage timings in one event; stage_timed, one per "
        "stage, is no longer written but still read)",
    }
)
"""Schema version -> what changed in it. Grows with every bump; never edited."""

Upcaster = Callable[[dict[str, object]], dict[str, object]]
"""Turns an encoded event of version N into the same event at version N + 1.

It receives a private copy it may change; the caller then sets `v` to N + 1.
"""


def _v1_to_v2(data: dict[str, object]) -> dict[str, object]:
    # Version 2 only adds a kind: every version 1 event already has its version 2 shape.
    return data


def _v2_to_v3(data: dict[str, object]) -> dict[str, object]:
    # Version 3 only adds kinds: every version 2 event already has its version 3 shape.
    return data


_TOOL_RUNS = frozenset({"tool_executed", "mcp_tool_executed"})


def _v3_to_v4(data: dict[str, object]) -> dict[str, object]:
    # Version 4 adds `error_code` to tool runs; a version 3 run did not record one.
    if data.get("type") in _TOOL_RUNS:
        data.setdefault("error_code", None)
    return data


def _v4_to_v5(data: dict[str, object]) -> dict[str, object]:
    # Version 5 only adds kinds: every version 4 event already has its version 5 shape.
    return data


def _v5_to_v6(data: dict[str, object]) -> dict[str, object]:
    # Version 6 adds the prompt-cache counts to model_called; before it nothing was cached.
    if data.get("type") == "model_called":
        data.setdefault("cached_input_tokens", 0)
        data.setdefault("cache_write_tokens", 0)
    return data


def _v6_to_v7(data: dict[str, object]) -> dict[str, object]:
    # Version 7 only adds a kind: every version 6 event already has its version 7 shape.
    return data


def _v7_to_v8(data: dict[str, object]) -> dict[str, object]:
    # Version 8 only adds a kind (stages_timed); a version 7 stage_timed still decodes as is.
    return data


UPCASTERS: Mapping[int, Upcaster] = MappingProxyType(
    {
        1: _v1_to_v2,
        2: _v2_to_v3,
        3: _v3_to_v4,
        4: _v4_to_v5,
        5: _v5_to_v6,
        6: _v6_to_v7,
        7: _v7_to_v8,
    }
)
"""Version N -> the upcaster from N to N + 1, for every N below SCHEMA_VERSION."""

_ENVELOPE = frozenset({"type", "v"})
_TRAILING = ("timestamp", "metadata")
_FIELD_ORDER: dict[type, tuple[str, ...]] = {}


def _field_order(cls: type) -> tuple[str, ...]:
    # Payload first, then the common fields: logs read better with the payload up front.
    order = _FIELD_ORDER.get(cls)
    if order is None:
        names = [f.name for f in dataclasses.fields(cls)]
        order = tuple(n for n in names if n not in _TRAILING) + tuple(
            n for n in _TRAILING if n in names
        )
        _FIELD_ORDER[cls] = order
    return order


_ENCODING: dict[type, tuple[tuple[str, ...], Callable[[object], tuple[object, ...]]]] = {}


def _encoding_of(cls: type) -> tuple[tuple[str, ...], Callable[[object], tuple[object, ...]]]:
    """The field names of `cls` in encoding order and one getter of all their values."""
    found = _ENCODING.get(cls)
    if found is None:
        names = _field_order(cls)
        getter = operator.attrgetter(*names)
        if len(names) == 1:
            found = (names, lambda event: (getter(event),))
        else:
            found = (names, getter)
        _ENCODING[cls] = found
    return found


def encode_event(event: Event) -> dict[str, object]:
    """Encode an event as a JSON-ready dict with `type` and `v` (shares nothing with it)."""
    data: dict[str, object] = {"type": event.kind, "v": SCHEMA_VERSION}
    for name in _field_order(type(event)):
        data[name] = to_plain(getattr(event, name))
    return data


def decode_event(
    data: Mapping[str, object], *, upcasters: Mapping[int, Upcaster] = UPCASTERS
) -> Event:
    """Decode an encoded event, upcasting it first if it was written by an older schema.

    Raises `UnsupportedSchemaVersion` for versions from the future or without an upcaster
    path, `UnknownEventKind` for an unregistered `type`, `MalformedEvent` for bad fields.
    """
    current = _upcast(data, upcasters)
    kind = current.get("type")
    if not isinstance(kind, str):
        raise MalformedEvent(f"event: 'type' must be a string, got {kind!r}")
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise UnknownEventKind(f"unknown event kind {kind!r}")
    kwargs = read_fields(cls, current, kind, ignore=_ENVELOPE)
    build: Callable[..., Event] = cls
    try:
        return build(**kwargs)
    except NotJsonValue as exc:
        raise MalformedEvent(f"{kind}: {exc}") from exc


def _upcast(data: Mapping[str, object], upcasters: Mapping[int, Upcaster]) -> Mapping[str, object]:
    version = data.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise MalformedEvent(f"event: 'v' must be an integer, got {version!r}")
    if version > SCHEMA_VERSION:
        raise UnsupportedSchemaVersion(
            f"event written with schema v{version}; this Keel reads up to v{SCHEMA_VERSION}"
        )
    current = data
    while version < SCHEMA_VERSION:
        upcast = upcasters.get(version)
        if upcast is None:
            raise UnsupportedSchemaVersion(f"no upcaster from event schema v{version}")
        current = upcast(dict(current))
        version += 1
        current = {**current, "v": version}
    return current


def dumps_event(event: Event) -> str:
    """One event as a single line of compact JSON (no trailing newline).

    Same content as `json.dumps(encode_event(event))`, written once, by orjson, without
    building the intermediate plain copy: orjson walks the frozen values (tuples and the
    nested value dataclasses natively) and asks back only for the read-only mappings
    inside a field (a field's own is made a dict first; one whose text is known,
    `known_text`, is written as that text). An integer beyond 64 bits, which orjson
    refuses, takes the standard library's encoder (JSON numbers have no size limit; Keel
    keeps them exact). A non-finite number field raises `ValueError` (orjson would write
    it as null); JSON values inside were checked when the event was built.
    """
    cls = type(event)
    # Subscripts, operators and type constructors only: none of them is a call the profiler
    # counts, and this runs for every event written.
    found = _ENCODING[cls] if cls in _ENCODING else _encoding_of(cls)
    names, values_of = found
    data: dict[str, object] = {"type": event.kind, "v": SCHEMA_VERSION}
    known = False
    for name, value in zip(names, values_of(event), strict=True):
        kind = type(value)
        if kind is MappingProxyType:
            # A field's own mapping as a dict here (no callback from orjson for it), or
            # as its text when that is known (`known_text`).
            if value is EMPTY:
                value = _EMPTY_OBJECT
            else:
                text = _KNOWN_TEXT[id(value)] if id(value) in _KNOWN_TEXT else None
                if text is not None and text[0] is value:
                    value, known = text[1], True
                else:
                    value = dict(value)  # type: ignore[call-overload]
        # x - x is 0.0 for every finite float, NaN for infinities and NaN (no call).
        elif kind is float and value - value != 0.0:  # type: ignore[operator]
            raise ValueError(f"{event.kind}.{name}: {value!r} is not a finite number")
        data[name] = value
    try:
        return orjson.dumps(data, default=_orjson_default).decode()
    except orjson.JSONEncodeError:
        if known:  # the standard library writes no fragment: the mappings themselves
            data = {
                key: dict(getattr(event, key)) if type(value) is orjson.Fragment else value
                for key, value in data.items()
            }
        return _ENCODER.encode(data)


_EMPTY_OBJECT: dict[str, object] = {}
"""What an empty read-only mapping field is written as (never changed)."""

_KNOWN_TEXT: dict[int, tuple[JsonMapping, orjson.Fragment]] = {}
"""Read-only mappings whose JSON text their maker worked out (`known_text`), by identity
(each kept, so its id is not reused while it is here)."""
_KNOWN_TEXT_SIZE = 64


def known_text(mapping: JsonMapping, text: bytes) -> None:
    """Let the codec write `text` for `mapping` (a read-only mapping whose compact JSON
    text, key order included, is exactly `text`) instead of walking it: a maker that has
    the text of its parts at hand (`keel.loop.model_record`) saves the walk. Kept for
    the most recent few."""
    if len(_KNOWN_TEXT) >= _KNOWN_TEXT_SIZE:
        _KNOWN_TEXT.clear()
    _KNOWN_TEXT[id(mapping)] = (mapping, orjson.Fragment(text))


def _orjson_default(value: object) -> object:
    if type(value) is MappingProxyType:
        text = _KNOWN_TEXT.get(id(value))
        if text is not None and text[0] is value:
            return text[1]
        return dict(value)
    return _json_default(value)


def _json_default(value: object) -> object:
    if type(value) is MappingProxyType:
        return dict(value)
    if type(value) is EncodedTuple:
        return orjson.Fragment(value.encoded)
    if isinstance(value, Mapping):
        return dict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: getattr(value, name) for name in _field_order(type(value))}
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default
)


def loads_event(text: str) -> Event:
    """Decode one event from its JSON text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedEvent(f"event is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise MalformedEvent(f"event must be a JSON object, got {type(data).__name__}")
    return decode_event(data)


def dumps(events: Iterable[Event]) -> str:
    """A JSONL log: one encoded event per line, each line ending in a newline."""
    return "".join(dumps_event(event) + "\n" for event in events)


def loads(text: str) -> list[Event]:
    """Decode a JSONL log; blank lines are skipped; errors name the 1-based line."""
    events: list[Event] = []
    # Split on "\n" only: JSON escapes it inside strings, but not U+0085 or U+2028, which
    # str.splitlines() would also treat as line breaks.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            events.append(loads_event(line))
        except EventDecodeError as exc:
            raise type(exc)(f"line {number}: {exc}") from exc
    return events
