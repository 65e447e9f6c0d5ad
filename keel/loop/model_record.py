"""The `model_called` record of one finished model round trip (pure).

The loop's calls (`keel.loop.model_call`) and the rephrase calls (`keel.loop.rephrase`)
record the same facts: the model that answered, the tier, tokens (cached ones included),
latency, cost, and in `metadata` the request as sent and the reply.

The request as sent is most of a record, and most of it was sent on the previous call
too: the system message and the history are the very same message objects from one call
to the next (`keel.loop.reuse`, `keel.loop.history_log`: a message given out is never
changed). `request_record` freezes only the messages it has not frozen before and reuses
the frozen form of the others by identity, so a call costs the messages it adds, not the
whole conversation again; the event is then built from frozen parts without a second walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import orjson

from keel.events.base import (
    EMPTY,
    EncodedTuple,
    JsonMapping,
    JsonValue,
    freeze_json,
    freeze_mapping,
    from_frozen,
)
from keel.events.codec import known_text
from keel.events.model import ModelCalled
from keel.llm.port import Message, ModelRequest, ModelResponse, ToolSchema
from keel.llm.usage import cost_of
from keel.project.model_groups import ModelSpec


@dataclass(frozen=True, kw_only=True, slots=True)
class _Sent:
    """The previous record's parts: the messages and tools sent, and their frozen forms."""

    messages: tuple[Message, ...]
    frozen: tuple[JsonMapping, ...]
    parts: tuple[bytes | None, ...]
    """Each frozen message's JSON text (None: only the standard library can write it)."""
    tools: tuple[ToolSchema, ...]
    names: tuple[str, ...]
    names_text: bytes
    """`names` as JSON text."""


_last_sent: list[_Sent | None] = [None]
_last_reply: list[tuple[bytes, JsonMapping] | None] = [None]
"""The last recorded reply's JSON text and frozen form."""
_last_request: list[tuple[JsonMapping, bytes] | None] = [None]
"""The last request record `request_record` made with its text, and that text."""
_KEY_TEXT: dict[str, bytes] = {}
"""Metadata keys as JSON text with the colon (the same few, call after call)."""


def _new_message(message: Message, index: int) -> tuple[JsonMapping, bytes | None]:
    """A message the last record did not hold: frozen, with its JSON text (None when
    orjson cannot write it as the codec would)."""
    # The message as given (plain dicts and lists, which orjson writes without asking
    # back) has the frozen copy's very text: freezing changes no value, only types.
    try:
        part: bytes | None = orjson.dumps(message)
    except (TypeError, orjson.JSONEncodeError):
        part = None  # not plain data, or a big integer: the codec walks it
    reply = _last_reply[0]
    if part is not None and reply is not None and reply[0] == part:
        # The previous call's reply, as the history repeats it: the same JSON text is the
        # same frozen value (types included), frozen once already.
        return reply[1], part
    made = freeze_mapping(message, path=f"metadata.request.messages[{index}]")  # type: ignore[arg-type]
    return made, part


def request_record(request: ModelRequest) -> JsonMapping:
    """What was sent, for `model_called.metadata.request`, frozen: the messages as sent
    (each its role, content and, as present, tool calls and tool call id: the closed message
    shapes of `keel.llm.port`) and the names of the offered tools. A message or tool tuple
    that is the very same object as in the previous record keeps its frozen form (checked
    by identity, never by value: equal dicts may still differ, `1` and `True`)."""
    last = _last_sent[0]
    messages = request.messages
    before: tuple[Message, ...] = ()
    kept: tuple[JsonMapping, ...] = ()
    kept_parts: tuple[bytes | None, ...] = ()
    if last is not None:
        before, kept, kept_parts = last.messages, last.frozen, last.parts
    # The messages sent last time come first again, in order (system message, history):
    # the common prefix is found by position; each later message (a closing system message,
    # this turn's new results) is looked for where the previous one was found, then among
    # the last record's remaining messages (a changed system message costs one scan).
    # Plain loops, subscripts and `+=`: no call per message reused.
    count, total = len(before), len(messages)
    same = 0
    while same < count and same < total and messages[same] is before[same]:
        same += 1
    frozen = list(kept[:same])
    parts = list(kept_parts[:same])
    cursor = same  # where the next message is expected in the last record
    for index in range(same, total):
        message = messages[index]
        if cursor < count and before[cursor] is message:
            frozen += (kept[cursor],)
            parts += (kept_parts[cursor],)
            cursor += 1
            continue
        for at in range(same, count):
            if before[at] is message:
                frozen += (kept[at],)
                parts += (kept_parts[at],)
                cursor = at + 1
                break
        else:
            made, part = _new_message(message, index)
            frozen += (made,)
            parts += (part,)
    tools = request.tools
    if last is not None and last.tools is tools:
        names, names_text = last.names, last.names_text
    else:
        names = tuple(tool.name for tool in tools)
        names_text = orjson.dumps(names)
    sent: tuple[JsonMapping, ...]
    record = None
    if None in parts:
        sent = tuple(frozen)
    else:
        # The array's text from its messages' texts: the codec writes it as it is.
        sent = encoded = EncodedTuple(frozen)
        encoded.encoded = b"[" + b",".join(parts) + b"]"  # type: ignore[arg-type]
        record = MappingProxyType({"messages": sent, "tools": names})
        text = b"".join((b'{"messages":', encoded.encoded, b',"tools":', names_text, b"}"))
        _last_request[0] = (record, text)
    _last_sent[0] = _Sent(
        messages=messages,
        frozen=sent,
        parts=tuple(parts),
        tools=tools,
        names=names,
        names_text=names_text,
    )
    return record if record is not None else MappingProxyType({"messages": sent, "tools": names})


def model_called(
    request: ModelRequest,
    response: ModelResponse,
    *,
    spec: ModelSpec | None,
    elapsed_ms: float,
    metadata: Mapping[str, JsonValue],
) -> ModelCalled:
    """The record of `request` answered by `response` in `elapsed_ms` (`spec` prices it).

    `metadata` is frozen here, each value once; its `request` may be `request_record`'s
    value, which is frozen already and kept as it is (any other read-only mapping there
    must be frozen JSON too: it is not copied)."""
    usage = response.usage
    frozen: dict[str, JsonValue] = {}
    for key, value in metadata.items():
        if key == "request" and type(value) is MappingProxyType:
            frozen[key] = value
        elif type(value) is str and value.isascii():
            frozen[key] = value  # what freezing an ASCII string gives (`tier_reason`)
        elif key == "reply" and type(value) is dict:
            frozen[key] = _frozen_reply(value)
        else:
            frozen[key] = freeze_json(value, path=f"metadata.{key}")
    kept = MappingProxyType(frozen)
    _know_text(metadata, frozen, kept)
    return from_frozen(
        ModelCalled,
        model=response.model,
        tier=request.tier,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        latency_ms=elapsed_ms,
        cost=cost_of(spec, usage),
        metadata=kept,
    )


def _frozen_reply(reply: dict[str, object]) -> JsonValue:
    """`freeze_json(reply)` for an assistant message of `keel.llm.port.assistant_message`'s
    shape, its strings ASCII (the usual reply), in one pass; anything else the general
    way (which also finds and names what is not JSON)."""
    calls = reply.get("tool_calls")
    frozen_calls: list[JsonMapping] = []
    if calls is not None:
        if type(calls) is not list:
            return freeze_json(reply, path="metadata.reply")
        for call in calls:
            function = call.get("function") if type(call) is dict else None
            if type(function) is not dict or not (
                _plain_ascii(call, _CALL_KEYS) and _plain_ascii(function, _FUNCTION_KEYS)
            ):
                return freeze_json(reply, path="metadata.reply")
            frozen_function = MappingProxyType(dict(function)) if function else EMPTY
            frozen_calls.append(MappingProxyType({**call, "function": frozen_function}))
    rest = {key: value for key, value in reply.items() if key != "tool_calls"}
    if not _plain_ascii(rest, _MESSAGE_KEYS):
        return freeze_json(reply, path="metadata.reply")
    frozen: dict[str, JsonValue] = dict(reply)  # type: ignore[arg-type]
    if calls is not None:
        frozen["tool_calls"] = tuple(frozen_calls)
    return MappingProxyType(frozen) if frozen else EMPTY


_MESSAGE_KEYS = frozenset({"role", "content"})
_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def _plain_ascii(mapping: dict[str, object], keys: frozenset[str]) -> bool:
    """Whether `mapping` has only `keys` (each at most once: a dict) and each value, but a
    `function` one, is an ASCII string or None: such a value freezes to itself."""
    for key, value in mapping.items():
        if key not in keys:
            return False
        if key == "function":
            continue
        if not (value is None or (type(value) is str and value.isascii())):
            return False
    return True


def _know_text(
    metadata: Mapping[str, JsonValue], frozen: dict[str, JsonValue], kept: JsonMapping
) -> None:
    """Tell the codec the text of the record's metadata (`keel.events.codec.known_text`),
    made of its parts' texts: the request's from `request_record`, the others' from the
    plain values given (freezing changes no value, only types). The reply, with its text,
    is kept for the next request, whose history repeats it. Nothing is told when a part
    has no text of its own (a frozen or non-plain value, a big integer)."""
    _last_reply[0] = None
    reply = metadata.get("reply")
    pieces: list[bytes] = []
    known = True
    last_request = _last_request[0]
    for key, value in metadata.items():
        if key == "request" and last_request is not None and value is last_request[0]:
            text = last_request[1]
        elif type(value) is MappingProxyType:
            known = False
            continue
        else:
            try:
                text = orjson.dumps(value)
            except (TypeError, orjson.JSONEncodeError):
                known = False
                continue
            if value is reply and type(reply) is dict:
                _last_reply[0] = (text, frozen[key])  # type: ignore[assignment]
        head = _KEY_TEXT.get(key)
        if head is None:
            head = orjson.dumps(key) + b":"
            if len(_KEY_TEXT) < 64:
                _KEY_TEXT[key] = head
        pieces.append(head + text)
    if known:
        known_text(kept, b"{" + b",".join(pieces) + b"}")
