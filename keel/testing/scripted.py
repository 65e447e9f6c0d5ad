"""`ScriptedModel`: a model that answers from a queue of scripted replies.

    model = ScriptedModel([
        {"text": None, "tool_calls": [{"name": "lookup", "arguments": {"id": "PX-1"}}]},
        "Your parcel is on its way.",
    ])
    ...  # drive the engine
    model.assert_complete()

It fails loudly both ways: a request with no reply left raises `ScriptExhausted` (naming
the last user message and the tools on offer) and is remembered, so `assert_complete`
raises it again even when the engine caught it; replies left over make `assert_complete`
raise `ScriptNotFinished`. Every request is recorded in `requests`. A reply scripted as a
failure (`{"error": "timeout"}`) makes its call raise the matching `keel.llm` error
(`ModelTimeout`, `ProviderUnavailable`, `RateLimited`, `InvalidModelRequest`).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from keel.errors import KeelError
from keel.llm import Message, ModelError, ModelRequest, ModelResponse, ToolCall
from keel.llm.errors import InvalidModelRequest, ModelTimeout, ProviderUnavailable, RateLimited
from keel.llm.none import NoModel
from keel.source.diagnostics import Diagnostic, diag
from keel.source.yaml import load_yaml
from keel.testing.script_replies import (
    InvalidReply,
    ScriptedReply,
    ScriptedToolCall,
    parse_reply,
)
from keel.testing.yamltext import restore_texts

ReplySource = ScriptedReply | Mapping[str, object] | str
"""Any accepted form of a reply (see `keel.testing.script_replies`)."""


class ScriptExhausted(ModelError):
    """The engine asked for a model reply the script does not have."""

    code = "keel.testing.script_exhausted"


class ScriptNotFinished(ModelError):
    """The test ended with scripted replies nobody asked for."""

    code = "keel.testing.script_not_finished"

    def __init__(self, leftover: tuple[ScriptedReply, ...]) -> None:
        self.leftover = leftover
        lines = [f"  {n}. {reply.describe()}" for n, reply in enumerate(leftover, start=1)]
        super().__init__(f"{len(leftover)} scripted reply(ies) left over:\n" + "\n".join(lines))


def _scripted_error(kind: str, number: int) -> ModelError:
    """The `keel.llm` error a reply `{"error": kind}` stands for."""
    message = f"scripted failure for request #{number}: {kind}"
    if kind == "timeout":
        return ModelTimeout(message)
    if kind == "rate_limited":
        return RateLimited(message, status=429, provider="scripted")
    if kind == "invalid_request":
        return InvalidModelRequest(message, status=400, provider="scripted")
    return ProviderUnavailable(message, status=503, provider="scripted")


class InvalidScript(KeelError, ValueError):
    """A script file cannot be used; `diagnostics` say where and why."""

    code = "keel.testing.invalid_script"

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.render() for d in diagnostics))


class ScriptedModel:
    """A `keel.llm.Model` that returns scripted replies in order."""

    def __init__(self, replies: Iterable[ReplySource] = (), *, name: str = "scripted") -> None:
        self._queue: deque[ScriptedReply] = deque()
        self._requests: list[ModelRequest] = []
        self._calls_queued = 0
        self._exhaustion: ScriptExhausted | None = None
        self._name = name
        self.extend(replies)

    def add(self, reply: ReplySource) -> None:
        """Queue one more reply; tool calls without an id are numbered `call_<n>`."""
        parsed = parse_reply(reply)
        calls: list[ScriptedToolCall] = []
        for call in parsed.tool_calls:
            self._calls_queued += 1
            calls.append(call if call.id else replace(call, id=f"call_{self._calls_queued}"))
        self._queue.append(replace(parsed, tool_calls=tuple(calls)))

    def extend(self, replies: Iterable[ReplySource]) -> None:
        """Queue several replies, in order."""
        for reply in replies:
            self.add(reply)

    @property
    def requests(self) -> tuple[ModelRequest, ...]:
        """Every request received so far, answered or not, in order."""
        return tuple(self._requests)

    @property
    def remaining(self) -> tuple[ScriptedReply, ...]:
        """The replies not yet given, in order."""
        return tuple(self._queue)

    @property
    def exhaustion(self) -> ScriptExhausted | None:
        """The first `ScriptExhausted` raised, if any (the engine may have swallowed it)."""
        return self._exhaustion

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Record `request` and answer with the next reply; raises `ScriptExhausted`."""
        self._requests.append(request)
        if not self._queue:
            error = ScriptExhausted(_exhausted_message(request, len(self._requests)))
            self._exhaustion = self._exhaustion or error
            raise error
        reply = self._queue.popleft()
        if reply.error is not None:
            raise _scripted_error(reply.error, len(self._requests))
        calls = tuple(
            ToolCall(id=call.id or "", name=call.name, arguments=call.arguments)
            for call in reply.tool_calls
        )
        return ModelResponse(text=reply.text, tool_calls=calls, model=self._name)

    def assert_complete(self) -> None:
        """Raise the recorded `ScriptExhausted`, or `ScriptNotFinished` for leftovers."""
        if self._exhaustion is not None:
            raise self._exhaustion
        if self._queue:
            raise ScriptNotFinished(tuple(self._queue))

    @classmethod
    def from_file(cls, path: Path | str) -> ScriptedModel:
        """A model scripted by a YAML or JSON file holding a list of replies.

        Raises `InvalidScript` (with `file:line` diagnostics) when the file is unusable.
        """
        return cls(load_script(Path(path)))


class AbsentModel(NoModel, ScriptedModel):
    """The model of a `model: none` test file: the loop sees no model (`has_model` is
    False) and serves the agent as `--model none` does; it holds no replies, and a request
    that reaches it anyway raises `NoModelConfigured`."""


def load_script(path: Path) -> tuple[ScriptedReply, ...]:
    """The replies listed in a YAML/JSON script file; raises `InvalidScript`."""
    file = path.as_posix()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidScript([diag("script.unreadable", file, None, str(exc))]) from None
    data, diagnostics = _parse_text(text, file, json_file=path.suffix == ".json")
    if diagnostics:
        raise InvalidScript(diagnostics)
    if not isinstance(data, list):
        raise InvalidScript([diag("script.not_list", file, 1, "a script is a list of replies")])
    try:
        return tuple(parse_reply(item) for item in data)
    except InvalidReply as exc:
        raise InvalidScript([diag("script.reply.invalid", file, exc.line, exc.message)]) from None


def _parse_text(text: str, file: str, *, json_file: bool) -> tuple[object, list[Diagnostic]]:
    if json_file:
        try:
            return json.loads(text), []
        except json.JSONDecodeError as exc:
            return None, [diag("script.json", file, exc.lineno, f"JSON error: {exc.msg}")]
    data, diagnostics = load_yaml(text, file)
    restore_texts(data, text)
    return data, diagnostics


def _exhausted_message(request: ModelRequest, number: int) -> str:
    tools = ", ".join(tool.name for tool in request.tools) or "(none)"
    parts = [
        f"the scripted model has no reply left for model request #{number}",
        f"last user message: {_last_user_text(request.messages)!r}",
    ]
    last = request.messages[-1] if request.messages else None
    if last is not None and last["role"] == "tool":
        parts.append(f"last message: tool result for {last['tool_call_id']}: {last['content']!r}")
    parts.append(f"tools offered: {tools}")
    return "; ".join(parts)


def _last_user_text(messages: tuple[Message, ...]) -> str | None:
    for message in reversed(messages):
        if message["role"] == "user":
            return message["content"]
    return None
