"""Parsing the expectations of `bot:` and `assert:` steps into checks (`spec`).

Expected texts are exact text, or `re:<pattern>` (the pattern must compile). The checks of a
model request: `offered_tools`, `not_offered`, `prompt_contains`, `prompt_lacks`, `tier`
(about the last request), and `request:` (any request, several checks).

    - assert:
        offered_tools: [activate, cannot_help, listen]
        tier: reasoning
        request: {number: 2, not_offered: [listen], prompt_contains: ["## Routing"], tier: router}
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import typing
from collections.abc import Callable, Mapping, Sequence

from keel.events.base import (
    ConversationStatus,
    JsonValue,
    NotJsonValue,
    ResponseSource,
    StopReason,
    freeze_json,
)
from keel.events.model import EVENT_TYPES
from keel.testing.conversation.assertions import COUNT_KEYS
from keel.testing.conversation.sink import Sink, line_in
from keel.testing.conversation.spec import (
    REGEX_PREFIX,
    ActiveSkillCheck,
    BotExpect,
    ButtonExpect,
    Check,
    CountCheck,
    EventPattern,
    EventsCheck,
    MemoryCheck,
    NoEventsCheck,
    PendingConfirmationCheck,
    RequestCheck,
    StatusCheck,
    StepCheck,
    StopReasonCheck,
    TextExpect,
)

# Expected texts.


def parse_text(value: object, line: int | None, sink: Sink, what: str) -> TextExpect | None:
    """Exact text or `re:<pattern>` (the pattern must compile)."""
    if not isinstance(value, str):
        sink.error("test.text.invalid", line, f"{what} must be text (quote it)")
        return None
    expect = TextExpect.parse(value)
    if expect.regex and not regex_ok(expect.text, line, sink):
        return None
    return expect


def regex_ok(pattern: str, line: int | None, sink: Sink) -> bool:
    """Whether `pattern` compiles; reports `test.regex.invalid` when it does not."""
    try:
        re.compile(pattern)
    except re.error as exc:
        sink.error("test.regex.invalid", line, f"bad regular expression {pattern!r}: {exc}")
        return False
    return True


# The checks of a model request.

REQUEST_KEYS = ("offered_tools", "not_offered", "prompt_contains", "prompt_lacks", "tier")
"""Checks of one request; at the top of `assert:` they are about the last request."""


def parse_request_key(key: str, raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    """One of `REQUEST_KEYS` at the top of an `assert:` (about the last request)."""
    check = _with(RequestCheck(), key, raw, line, sink)
    return () if check is None else (check,)


def parse_request(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    """`request: {number?, offered_tools?, not_offered?, prompt_contains?, prompt_lacks?,
    tier?}`."""
    if not isinstance(raw, Mapping) or not raw:
        sink.error("test.assert.request", line, "request takes a mapping of request checks")
        return ()
    check: RequestCheck | None = RequestCheck()
    for key, value in raw.items():
        at = line_in(raw, key, line)
        if key == "number":
            if not isinstance(value, int) or isinstance(value, bool) or value == 0:
                sink.error("test.assert.request", at, "number is a whole number other than 0")
                return ()
            check = dataclasses.replace(check, number=value) if check else None
        elif key in REQUEST_KEYS:
            check = _with(check, str(key), value, at, sink) if check else None
        else:
            known = ", ".join(("number", *REQUEST_KEYS))
            sink.error("test.assert.request", at, f"unknown request check {key!r} ({known})")
            return ()
    return () if check is None else (check,)


def _with(
    check: RequestCheck, key: str, raw: object, line: int | None, sink: Sink
) -> RequestCheck | None:
    """`check` with the check `key` added; None (and a diagnostic) when `raw` is malformed."""
    if key == "tier":
        if not isinstance(raw, str) or not raw.strip():
            sink.error("test.assert.request", line, "tier takes a tier name (router, default, ...)")
            return None
        return dataclasses.replace(check, tier=raw.strip())
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, Sequence) or not items:
        sink.error("test.assert.request", line, f"{key} takes a non-empty list")
        return None
    if key in ("offered_tools", "not_offered"):
        if not all(isinstance(item, str) and item for item in items):
            sink.error("test.assert.request", line, f"{key} takes a list of tool names")
            return None
        names = tuple(str(item) for item in items)
        if key == "offered_tools":
            return dataclasses.replace(check, offered=names)
        return dataclasses.replace(check, not_offered=names)
    errors = len(sink.diagnostics)
    texts = [parse_text(item, line, sink, f"an item of {key}") for item in items]
    found = tuple(text for text in texts if text is not None)
    if len(sink.diagnostics) > errors:
        return None
    if key == "prompt_contains":
        return dataclasses.replace(check, contains=found)
    return dataclasses.replace(check, lacks=found)


# The steps' expectations.

_STATUSES = frozenset(typing.get_args(ConversationStatus))
_STOP_REASONS = frozenset(typing.get_args(StopReason))
_SOURCES = frozenset(typing.get_args(ResponseSource))


def parse_bot(value: object, line: int | None, sink: Sink) -> BotExpect | None:
    """`bot: <text>` or `bot: {text, buttons, utter, source}`."""
    if not isinstance(value, Mapping):
        text = parse_text(value, line, sink, "bot text")
        return None if text is None else BotExpect(text=text)
    unknown = [key for key in value if key not in {"text", "buttons", "utter", "source"}]
    if unknown or not value:
        sink.error(
            "test.bot.invalid",
            line_in(value, unknown[0], line) if unknown else line,
            "a bot step is text or a mapping of text, buttons, utter and source",
        )
        return None
    errors = len(sink.diagnostics)
    text = None
    if "text" in value:
        text = parse_text(value["text"], line_in(value, "text", line), sink, "bot text")
    buttons = _buttons(value.get("buttons"), line_in(value, "buttons", line), sink)
    utter = value.get("utter")
    if utter is not None and not isinstance(utter, str):
        sink.error("test.bot.invalid", line_in(value, "utter", line), "utter must be a name")
    source = value.get("source")
    if source is not None and source not in _SOURCES:
        allowed = ", ".join(sorted(_SOURCES))
        sink.error(
            "test.bot.invalid", line_in(value, "source", line), f"source is one of {allowed}"
        )
    if len(sink.diagnostics) > errors:
        return None
    return BotExpect(text=text, buttons=buttons, utter=utter, source=source)


def _buttons(raw: object, line: int | None, sink: Sink) -> tuple[ButtonExpect, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        sink.error("test.bot.buttons", line, "buttons must be a list")
        return None
    buttons = []
    for index, item in enumerate(raw):
        at = line_in(raw, index, line)
        if isinstance(item, str | bool | int | float):
            item = {"title": item}
        if not isinstance(item, Mapping) or "title" not in item or set(item) - {"title", "payload"}:
            sink.error("test.bot.buttons", at, "a button is a title or {title, payload}")
            continue
        title = parse_text(item["title"], at, sink, "a button title")
        payload = None
        if item.get("payload") is not None:
            payload = parse_text(item["payload"], at, sink, "a button payload")
        if title is not None:
            buttons.append(ButtonExpect(title=title, payload=payload))
    return tuple(buttons)


def parse_assert(value: object, line: int | None, sink: Sink) -> tuple[Check, ...] | None:
    """The checks of an `assert:` mapping, in the order written."""
    if not isinstance(value, Mapping) or not value:
        sink.error("test.assert.invalid", line, "assert takes a mapping of checks")
        return None
    errors = len(sink.diagnostics)
    checks: list[Check] = []
    for key, raw in value.items():
        at = line_in(value, key, line)
        parser = _PARSERS.get(key)
        if parser is None and key in COUNT_KEYS:
            parser = _count_parser(key)
        if parser is None and key in REQUEST_KEYS:
            checks.extend(parse_request_key(key, raw, at, sink))
            continue
        if parser is None:
            known = ", ".join(sorted([*_PARSERS, *COUNT_KEYS, *REQUEST_KEYS]))
            sink.error("test.assert.unknown_key", at, f"unknown check {key!r} (known: {known})")
            continue
        checks.extend(parser(raw, at, sink))
    return None if len(sink.diagnostics) > errors else tuple(checks)


_Parser = Callable[[object, int | None, Sink], tuple[Check, ...]]


def _memory(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    if not isinstance(raw, Mapping) or not raw:
        sink.error("test.assert.memory", line, "memory takes a mapping of key: value")
        return ()
    checks: list[Check] = []
    for key, value in raw.items():
        at = line_in(raw, key, line)
        if not isinstance(key, str):
            sink.error("test.assert.memory", at, f"memory key {key!r} must be text")
            continue
        ok, frozen = _json(value, at, sink)
        if ok:
            checks.append(MemoryCheck(key=key, expected=frozen, unset=value is None))
    return tuple(checks)


def _events(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    patterns = _patterns(raw, line, sink, "events")
    return () if patterns is None else (EventsCheck(patterns=patterns),)


def _no_events(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    patterns = _patterns(raw, line, sink, "no_events")
    return () if patterns is None else (NoEventsCheck(patterns=patterns),)


def _patterns(
    raw: object, line: int | None, sink: Sink, key: str
) -> tuple[EventPattern, ...] | None:
    if not isinstance(raw, Sequence) or isinstance(raw, str) or not raw:
        sink.error("test.assert.events", line, f"{key} takes a list of event kinds or patterns")
        return None
    patterns = [_pattern(item, line_in(raw, index, line), sink) for index, item in enumerate(raw)]
    return tuple(p for p in patterns if p is not None)


def _pattern(item: object, line: int | None, sink: Sink) -> EventPattern | None:
    fields = dict(item) if isinstance(item, Mapping) else {}
    kind = fields.pop("kind", None) if isinstance(item, Mapping) else item
    if not isinstance(kind, str):
        sink.error("test.assert.events", line, "an event is a kind or {kind: ..., field: ...}")
        return None
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        near = difflib.get_close_matches(kind, list(EVENT_TYPES), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        sink.error("test.assert.event_kind", line, f"unknown event kind {kind!r}{hint}")
        return None
    names = {f.name for f in dataclasses.fields(cls)}
    expected: list[tuple[str, JsonValue]] = []
    for name, value in fields.items():
        at = line_in(item, name, line)
        if name not in names:
            listed = ", ".join(sorted(names))
            sink.error("test.assert.event_field", at, f"{kind} has no field {name!r} ({listed})")
            continue
        ok, frozen = _json(value, at, sink)
        if ok and _regexes_ok(value, at, sink):
            expected.append((str(name), frozen))
    return EventPattern(kind=kind, fields=tuple(expected))


def _active_skill(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    if raw is not None and not isinstance(raw, str):
        sink.error("test.assert.active_skill", line, "active_skill takes a skill id or null")
        return ()
    return (ActiveSkillCheck(skill_id=raw),)


def _step(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    if raw is None:
        return (StepCheck(none=True),)
    keys = {"skill", "block", "step"}
    if (
        not isinstance(raw, Mapping)
        or not raw
        or set(raw) - keys
        or not all(isinstance(v, str) for v in raw.values())
    ):
        sink.error("test.assert.step", line, "step takes {skill?, block?, step?} ids, or null")
        return ()
    return (StepCheck(skill=raw.get("skill"), block=raw.get("block"), step=raw.get("step")),)


def _choice(key: str, allowed: frozenset[str], build: Callable[[str], Check]) -> _Parser:
    def parse(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
        if raw not in allowed:
            listed = ", ".join(sorted(allowed))
            sink.error(f"test.assert.{key}", line, f"{key} is one of {listed}, not {raw!r}")
            return ()
        return (build(str(raw)),)

    return parse


def _count_parser(key: str) -> _Parser:
    def parse(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
        if not isinstance(raw, int) or isinstance(raw, bool) or raw < 0:
            sink.error(f"test.assert.{key}", line, f"{key} takes a whole number >= 0")
            return ()
        return (CountCheck(what=key, expected=raw),)

    return parse


def _pending(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    if raw is not None and not isinstance(raw, str):
        sink.error("test.assert.pending_confirmation", line, "takes a tool name or null")
        return ()
    return (PendingConfirmationCheck(tool_name=raw),)


_PARSERS: Mapping[str, _Parser] = {
    "memory": _memory,
    "events": _events,
    "no_events": _no_events,
    "active_skill": _active_skill,
    "step": _step,
    "state": _choice("state", _STATUSES, lambda s: StatusCheck(status=s)),
    "stop_reason": _choice("stop_reason", _STOP_REASONS, lambda r: StopReasonCheck(reason=r)),
    "pending_confirmation": _pending,
    "request": parse_request,
}


def _json(value: object, line: int | None, sink: Sink) -> tuple[bool, JsonValue]:
    try:
        return True, freeze_json(value)
    except NotJsonValue as exc:
        sink.error("test.assert.not_json", line, f"not a JSON value: {exc}")
        return False, None


def _regexes_ok(value: object, line: int | None, sink: Sink) -> bool:
    if isinstance(value, str):
        return not value.startswith(REGEX_PREFIX) or regex_ok(
            value[len(REGEX_PREFIX) :], line, sink
        )
    if isinstance(value, Mapping):
        return all(_regexes_ok(item, line, sink) for item in value.values())
    if isinstance(value, list):
        return all(_regexes_ok(item, line, sink) for item in value)
    return True
