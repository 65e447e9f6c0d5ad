"""OTLP trace protobuf written directly: spans as bytes, requests as joined bytes.

The wire format of opentelemetry-proto's `ExportTraceServiceRequest` for the fields Keel
sends (a test decodes the output with opentelemetry-proto's own classes). A span is encoded
once, when its run is reported, as a `ScopeSpans.spans` entry (tag, length, `Span` bytes);
a request is one `ResourceSpans` with Keel's resource and scope whose spans are those
entries joined, so a batch costs a join, not a re-encoding.

Attribute fields with a string or int value are memoised (names, models, tools,
codes and small counts repeat from turn to turn), and so are a span's name and kind
fields (`name_kind`); each memo is cleared when it grows past `_MEMO_LIMIT` entries. A span
whose parts are encoded beforehand is written with `SpanWriter.put`: a join of them, its
times and its length.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[bool] | Sequence[int]
Attributes = Mapping[str, AttributeValue]

INTERNAL, SERVER, CLIENT = 1, 2, 3
"""OTLP `Span.SpanKind` numbers."""

STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2

_MEMO_LIMIT = 8192
_pack_fixed64 = struct.Struct("<Q").pack
_pack_double = struct.Struct("<d").pack
pack_double = _pack_double
"""A double's 8 bytes: `float_prefix(key) + pack_double(value)` is its attribute field."""


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    if value < 0x4000:
        return bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _ld(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    size = len(payload)
    if size < 0x80:
        return b"".join((tag, _SIZES[size], payload))
    return b"".join((tag, _varint(size), payload))


_SIZES = tuple(bytes((n,)) for n in range(0x80))


def _tag(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


_VARINT, _FIXED64, _LD, _FIXED32 = 0, 1, 2, 5

# AnyValue
_STRING, _BOOL, _INT, _DOUBLE, _ARRAY = (
    _tag(1, _LD),
    _tag(2, _VARINT),
    _tag(3, _VARINT),
    _tag(4, _FIXED64),
    _tag(5, _LD),
)
_ARRAY_VALUES = _tag(1, _LD)  # ArrayValue.values
_KV_KEY, _KV_VALUE = _tag(1, _LD), _tag(2, _LD)  # KeyValue
_DOUBLE_VALUE = _KV_VALUE + bytes((9,)) + _DOUBLE  # an AnyValue of one double: 9 bytes
# Span
_TRACE_ID, _SPAN_ID, _PARENT_ID, _NAME = _tag(1, _LD), _tag(2, _LD), _tag(4, _LD), _tag(5, _LD)
_KIND, _START, _END = _tag(6, _VARINT), _tag(7, _FIXED64), _tag(8, _FIXED64)
_ATTRIBUTE, _EVENT, _STATUS = _tag(9, _LD), _tag(11, _LD), _tag(15, _LD)
_PARENT_TAG = _PARENT_ID + b"\x08"
_pack_times = struct.Struct("<BQBQ").pack
_START_TAG, _END_TAG = _START[0], _END[0]
_KINDS = {kind: _KIND + _varint(kind) for kind in (INTERNAL, SERVER, CLIENT)}
_EVENT_TIME, _EVENT_NAME, _EVENT_ATTRIBUTE = _tag(1, _FIXED64), _tag(2, _LD), _tag(3, _LD)
_STATUS_MESSAGE, _STATUS_CODE = _tag(2, _LD), _tag(3, _VARINT)
# ResourceSpans, ScopeSpans, Resource, InstrumentationScope, ExportTraceServiceRequest
_RESOURCE, _SCOPE_SPANS = _tag(1, _LD), _tag(2, _LD)
_SCOPE, _SPANS = _tag(1, _LD), _tag(2, _LD)
_RESOURCE_ATTRIBUTE = _tag(1, _LD)
_SCOPE_NAME, _SCOPE_VERSION = _tag(1, _LD), _tag(2, _LD)
_RESOURCE_SPANS = _tag(1, _LD)

_memo_str: dict[tuple[str, str], bytes] = {}
_memo_int: dict[tuple[str, int], bytes] = {}
_floats: dict[str, bytes] = {}
_keys: dict[str, bytes] = {}


def _int64(value: int) -> bytes:
    return _varint(value if value >= 0 else value + (1 << 64))


def _any(value: AttributeValue) -> bytes:
    """An `AnyValue` message's bytes."""
    if isinstance(value, str):
        return _ld(_STRING, value.encode("utf-8", "replace"))
    if isinstance(value, bool):
        return _BOOL + (b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return _INT + _int64(value)
    if isinstance(value, float):
        return _DOUBLE + _pack_double(value)
    items = b"".join(_ld(_ARRAY_VALUES, _any(item)) for item in value)
    return _ld(_ARRAY, items)


def _key(key: str) -> bytes:
    encoded = _keys.get(key)
    if encoded is None:
        if len(_keys) >= _MEMO_LIMIT:
            _keys.clear()
        encoded = _keys[key] = _ld(_KV_KEY, key.encode("utf-8", "replace"))
    return encoded


def pair(key: str, value: AttributeValue) -> bytes:
    """A `KeyValue` message's bytes."""
    return _key(key) + _ld(_KV_VALUE, _any(value))


def float_prefix(key: str) -> bytes:
    """Everything of a double-valued attribute field before its 8 bytes (its size is
    fixed: the key's field and 11 bytes)."""
    found = _floats.get(key)
    if found is None:
        if len(_floats) >= _MEMO_LIMIT:
            _floats.clear()
        keyed = _key(key)
        found = _floats[key] = _ATTRIBUTE + _varint(len(keyed) + 11) + keyed + _DOUBLE_VALUE
    return found


_text_keys: dict[str, bytes] = {}
_TEXT_HEADS = tuple(bytes((n + 2, _STRING[0], n)) for n in range(0x7E))
"""(`KeyValue.value` length, `AnyValue.string_value` tag and length) of a short string."""


def float_writer(key: str) -> Callable[[float], bytes]:
    """The writer of a double-valued attribute field: `float_writer(key)(value)` is
    `float_prefix(key) + pack_double(value)`, in one call."""
    prefix = float_prefix(key)
    return partial(struct.Struct(f"<{len(prefix)}sd").pack, prefix)


def text_field(key: str, value: str) -> bytes:
    """A string attribute field, not memoised (for ids: a value seen once)."""
    keyed = _text_keys.get(key)
    if keyed is None:
        if len(_text_keys) >= _MEMO_LIMIT:
            _text_keys.clear()
        keyed = _text_keys[key] = _key(key) + _KV_VALUE
    text = value.encode("utf-8", "replace")
    size = len(text)
    if size < 0x7E:
        total = len(keyed) + size + 3
        if total < 0x80:
            return b"".join((_ATTRIBUTE, _SIZES[total], keyed, _TEXT_HEADS[size], text))
    any_value = _STRING + _varint(size) + text
    size = len(any_value)
    keyed += _varint(size) + any_value
    return _ATTRIBUTE + _varint(len(keyed)) + keyed


def field(key: str, value: AttributeValue) -> bytes:
    """A span's attribute field (tag, length, `KeyValue`); memoised for strings and ints
    (names, codes and small counts repeat), a memoised prefix and the value for floats."""
    kind = type(value)
    if kind is str:
        found = _memo_str.get((key, value))  # type: ignore[arg-type]
    elif kind is int:
        found = _memo_int.get((key, value))  # type: ignore[arg-type]
    elif kind is float:
        return float_prefix(key) + _pack_double(value)
    else:
        return _ld(_ATTRIBUTE, pair(key, value))
    if found is None:
        memo: dict[tuple[str, Any], bytes] = _memo_str if kind is str else _memo_int
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        found = memo[(key, value)] = _ld(_ATTRIBUTE, pair(key, value))
    return found


def attributes(values: Attributes) -> bytes:
    """A span's attribute fields."""
    return b"".join([field(key, value) for key, value in values.items()])


def _tagged(values: Attributes, tag: bytes) -> bytes:
    return b"".join([_ld(tag, pair(key, value)) for key, value in values.items()])


def event(name: str, time_ns: int, values: Attributes) -> bytes:
    """A `Span.Event` message's bytes."""
    return b"".join(
        (
            _EVENT_TIME,
            _pack_fixed64(time_ns),
            _ld(_EVENT_NAME, name.encode("utf-8", "replace")),
            _tagged(values, _EVENT_ATTRIBUTE),
        )
    )


class SpanWriter:
    """Writes the spans of one trace; `write` gives a `ScopeSpans.spans` entry (tag and
    length included).

    `put` is `write` in parts encoded beforehand (`parent_field`, `name_kind`, and the
    attributes, `event_fields` and `status` joined), for spans whose parts repeat."""

    __slots__ = ("head",)

    def __init__(self, trace_id: bytes) -> None:
        self.head = _TRACE_ID + b"\x10" + trace_id + _SPAN_ID + b"\x08"
        """The fields every span of the trace starts with, up to its 8-byte span id."""

    def write(
        self,
        span_id: bytes,
        parent_id: bytes | None,
        name: str,
        kind: int,
        start_ns: int,
        end_ns: int,
        values: bytes,
        events: Sequence[bytes] = (),
        error: str | None = None,
    ) -> bytes:
        """One span: `values` are its attribute fields (`field`, `attributes`), `events`
        its events (`event`), `error` an error status's message."""
        rest = values
        if events:
            rest += event_fields(events)
        if error is not None:
            rest += status(error)
        parent = _PARENT_TAG + parent_id if parent_id is not None else b""
        return self.put(span_id, parent, name_kind(name, kind), start_ns, end_ns, rest)

    def put(
        self,
        span_id: bytes,
        parent: bytes,
        named: bytes,
        start_ns: int,
        end_ns: int,
        rest: bytes,
    ) -> bytes:
        """One span from its parts: `parent` is a `parent_field` (or empty for a root),
        `named` a `name_kind`, `rest` the fields after the times (attributes, events,
        status)."""
        body = b"".join(
            (
                self.head,
                span_id,
                parent,
                named,
                _pack_times(
                    _START_TAG, start_ns, _END_TAG, end_ns if end_ns > start_ns else start_ns
                ),
                rest,
            )
        )
        size = len(body)
        if size < 0x80:
            return b"".join((_SPANS, _SIZES[size], body))
        if size < 0x4000:  # most spans: a two-byte length
            return b"".join((_SPANS, bytes((size & 0x7F | 0x80, size >> 7)), body))
        return b"".join((_SPANS, _varint(size), body))


def parent_field(parent_id: bytes) -> bytes:
    """A span's parent span id field (of an 8-byte id)."""
    return _PARENT_TAG + parent_id


_name_kinds: dict[tuple[str, int], bytes] = {}


def name_kind(name: str, kind: int) -> bytes:
    """A span's name and kind fields (memoised: names repeat)."""
    found = _name_kinds.get((name, kind))
    if found is None:
        if len(_name_kinds) >= _MEMO_LIMIT:
            _name_kinds.clear()
        named = _ld(_NAME, name.encode("utf-8", "replace"))
        found = _name_kinds[(name, kind)] = named + _KINDS[kind]
    return found


def event_fields(events: Sequence[bytes]) -> bytes:
    """A span's event fields, of `event` messages."""
    return b"".join([_ld(_EVENT, one) for one in events])


def status(error: str) -> bytes:
    """An error status field with its message."""
    message = _ld(_STATUS_MESSAGE, error.encode("utf-8", "replace"))
    return _ld(_STATUS, message + _STATUS_CODE + _varint(STATUS_ERROR))


def event_parts(name: str, values: Attributes) -> tuple[bytes, bytes]:
    """A span's event field in two: `head + pack_fixed64(time_ns) + tail` is the field of
    the event at `time_ns` (the time's size is fixed)."""
    encoded = event(name, 0, values)
    return _EVENT + _varint(len(encoded)) + _EVENT_TIME, encoded[9:]


pack_fixed64 = _pack_fixed64


def event_at(encoded: bytes, time_ns: int) -> bytes:
    """`encoded` (an `event` message) with its time replaced by `time_ns`."""
    return _EVENT_TIME + _pack_fixed64(time_ns) + encoded[9:]


def span(
    *,
    trace_id: bytes,
    span_id: bytes,
    parent_id: bytes | None,
    name: str,
    kind: int,
    start_ns: int,
    end_ns: int,
    values: bytes,
    events: Sequence[bytes] = (),
    error: str | None = None,
) -> bytes:
    """One span of its own trace (`SpanWriter.write`)."""
    writer = SpanWriter(trace_id)
    return writer.write(span_id, parent_id, name, kind, start_ns, end_ns, values, events, error)


def envelope(resource: Attributes, scope_name: str, scope_version: str) -> tuple[bytes, bytes]:
    """(`Resource` field, `InstrumentationScope` field) of every request, encoded once."""
    resource_field = _ld(_RESOURCE, _tagged(resource, _RESOURCE_ATTRIBUTE))
    scope = _ld(_SCOPE_NAME, scope_name.encode()) + _ld(_SCOPE_VERSION, scope_version.encode())
    return resource_field, _ld(_SCOPE, scope)


def request(envelope_fields: tuple[bytes, bytes], spans: Sequence[bytes]) -> bytes:
    """An `ExportTraceServiceRequest` body: one resource, one scope, `spans` (from `span`)."""
    resource_field, scope_field = envelope_fields
    scope_spans = _ld(_SCOPE_SPANS, scope_field + b"".join(spans))
    return _ld(_RESOURCE_SPANS, resource_field + scope_spans)
