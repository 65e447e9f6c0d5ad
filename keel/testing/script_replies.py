"""Scripted model replies: the accepted forms and their normal form, `ScriptedReply`.

A reply is given as

* a bare string: text only;
* an OpenAI chat assistant message: `{"content": ..., "tool_calls": [{"id": "c1",
  "type": "function", "function": {"name": "x", "arguments": "{\\"a\\": 1}"}}]}`;
* the short form: `{"text": ..., "tool_calls": [{"name": "x", "arguments": {"a": 1}}]}`;
* a failure: `{"error": "timeout"}` makes that call raise instead of answering (one of
  `SCRIPTED_ERRORS`: `timeout`, `unavailable`, `rate_limited`, `invalid_request`).

Arguments given as a mapping are JSON-encoded; a string is kept exactly (so a script can
send malformed JSON on purpose); no arguments mean `{}`. A call without an id gets one
when it is queued in a `ScriptedModel` (`call_1`, `call_2`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keel.errors import KeelError
from keel.source.yaml import line_of, own_line


class InvalidReply(KeelError, ValueError):
    """A scripted reply has an unknown shape. `node`/`key` locate it in parsed YAML."""

    code = "keel.testing.invalid_reply"

    def __init__(self, message: str, node: object = None, key: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.key = key

    @property
    def line(self) -> int | None:
        """The 1-based line of the problem when the reply came from `load_yaml` data."""
        if self.key is not None:
            return line_of(self.node, self.key, own_line(self.node))
        return own_line(self.node)


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedToolCall:
    """One tool call of a scripted reply; `id` None means "number it when queued"."""

    name: str
    arguments: str
    """The raw JSON text the model sends (not validated: scripts may send bad JSON)."""

    id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptedReply:
    """One scripted model reply: text and/or tool calls."""

    text: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    error: str | None = None
    """The call raises this scripted failure (a key of `SCRIPTED_ERRORS`) instead."""

    def describe(self) -> str:
        """A one-line summary for error messages."""
        if self.error is not None:
            return f"error {self.error}"
        parts = [] if self.text is None else [f"text {_clip(self.text)!r}"]
        parts += [f"{call.name}({_clip(call.arguments, 60)})" for call in self.tool_calls]
        return ", ".join(parts) or "(empty reply)"


_REPLY_KEYS = frozenset({"role", "content", "text", "tool_calls"})
SCRIPTED_ERRORS = frozenset({"timeout", "unavailable", "rate_limited", "invalid_request"})
"""The failures a reply `{"error": ...}` can script (see `keel.testing.scripted`)."""
_OPENAI_CALL_KEYS = frozenset({"id", "type", "function"})
_SHORT_CALL_KEYS = frozenset({"id", "name", "arguments"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})


def parse_reply(raw: object) -> ScriptedReply:
    """Normalise one reply in any accepted form; raises `InvalidReply`."""
    if isinstance(raw, ScriptedReply):
        return raw
    if isinstance(raw, str):
        return ScriptedReply(text=raw)
    if not isinstance(raw, Mapping):
        raise InvalidReply(
            f"a model reply is text or a mapping, not {_kind(raw)} (quote plain text)", raw
        )
    if "error" in raw:
        return _parse_error(raw)
    _check_keys(raw, _REPLY_KEYS, "model reply")
    if raw.get("role", "assistant") != "assistant":
        raise InvalidReply("a model reply's role must be 'assistant'", raw, "role")
    if "content" in raw and "text" in raw:
        raise InvalidReply("give either 'content' or 'text', not both", raw, "text")
    text_key = "text" if "text" in raw else "content"
    text = raw.get(text_key)
    if text is not None and not isinstance(text, str):
        raise InvalidReply(f"'{text_key}' must be text (quote it)", raw, text_key)
    return ScriptedReply(text=text, tool_calls=_parse_calls(raw))


def _parse_error(raw: Mapping[object, object]) -> ScriptedReply:
    _check_keys(raw, frozenset({"error"}), "scripted failure")
    error = raw.get("error")
    if not isinstance(error, str) or error not in SCRIPTED_ERRORS:
        allowed = ", ".join(sorted(SCRIPTED_ERRORS))
        raise InvalidReply(f"'error' must be one of {allowed}, not {error!r}", raw, "error")
    return ScriptedReply(error=error)


def _parse_calls(raw: Mapping[str, object]) -> tuple[ScriptedToolCall, ...]:
    calls = raw.get("tool_calls")
    if calls is None:
        return ()
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise InvalidReply("'tool_calls' must be a list", raw, "tool_calls")
    return tuple(_parse_call(call) for call in calls)


def _parse_call(call: object) -> ScriptedToolCall:
    if not isinstance(call, Mapping):
        raise InvalidReply(f"a tool call is a mapping, not {_kind(call)}", call)
    if "function" in call:
        _check_keys(call, _OPENAI_CALL_KEYS, "tool call")
        if call.get("type", "function") != "function":
            raise InvalidReply("a tool call's type must be 'function'", call, "type")
        function = call["function"]
        if not isinstance(function, Mapping):
            raise InvalidReply("'function' must be a mapping", call, "function")
        _check_keys(function, _FUNCTION_KEYS, "function")
        source: Mapping[str, object] = function
    else:
        _check_keys(call, _SHORT_CALL_KEYS, "tool call")
        source = call
    name = source.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidReply("a tool call needs a 'name'", source, "name")
    call_id = call.get("id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise InvalidReply("a tool call 'id' must be non-empty text", call, "id")
    arguments = _arguments_text(source)
    return ScriptedToolCall(name=name, arguments=arguments, id=call_id)


def _arguments_text(source: Mapping[str, object]) -> str:
    arguments = source.get("arguments")
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        try:
            return json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InvalidReply(f"arguments are not JSON: {exc}", source, "arguments") from None
    raise InvalidReply(
        "'arguments' must be a mapping or JSON text, not " + _kind(arguments), source, "arguments"
    )


def _check_keys(raw: Mapping[object, object], allowed: frozenset[str], what: str) -> None:
    for key in raw:
        if key not in allowed:
            raise InvalidReply(
                f"unknown key {key!r} in a {what} (allowed: {', '.join(sorted(allowed))})",
                raw,
                key,
            )


def _kind(value: object) -> str:
    return "nothing" if value is None else f"a {type(value).__name__}"


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
