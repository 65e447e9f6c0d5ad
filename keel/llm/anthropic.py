"""`AnthropicModel`: the Anthropic Messages API adapter, built on the official `anthropic` SDK.

    model = AnthropicModel(model="claude-sonnet-4-5", api_key=key)
    response = await model.complete(request)
    async for event in model.stream(request): ...

The SDK's own retries are off (`max_retries=0`): retrying with backoff and falling back is
Keel's job, one layer up, so one `complete` is one HTTP request. Every SDK failure leaves this
module as a `keel.llm.ModelError`.

Requests: a `ModelRequest` (OpenAI Chat message shapes) becomes Messages API parameters.

    system messages that   -> the `system` parameter, joined with blank lines, in order
    open the request          (split into two text blocks at the prompt's stable part when
                              the request says where it ends: see Prompt caching below)
    a later system message -> a text block of a user turn (the prompt's volatile part, which
                              closes the request after the history)
    user                   -> a user turn with one text block
    assistant              -> an assistant turn: its text block, then one `tool_use` block per
                              tool call, `input` being the parsed `arguments` JSON
    tool (one or more)     -> a user turn of `tool_result` blocks {tool_use_id, content}
    tools                  -> [{name, description, input_schema}]

The Messages API wants user and assistant turns to alternate, so consecutive turns of the same
role are merged into one (several tool results become one user turn; a user message that
follows tool results joins their turn). Within a merged user turn the `tool_result` blocks
come first, as the API requires. Empty text is left out (the API rejects empty text blocks),
and a turn left with no blocks is dropped.

Tool-call `arguments` that are not a JSON object (malformed JSON from an earlier reply, or a
bare value) are sent as `input: {}`: the API accepts only objects there, and refusing the whole
request would strand the conversation on a bad earlier reply. The tool result that follows
still tells the model what happened.

Prompt caching: a request whose `cache` (`keel.llm.port.PromptCache`) says anything gets
`cache_control: {"type": "ephemeral"}` breakpoints (at most three of the four the API allows):
on the last tool (the API caches tools, then system, then messages, in that order) and, when
`stable_system_chars` is known, on a first system text block holding exactly the stable
part (the rest follows in a second block, so the text the model reads is unchanged); and
when the request closes with its volatile system text after the history, on the block just
before that text, so the next request reuses the conversation so far. Prefixes shorter
than the model's minimum (1,024 tokens on most models) are not cached
by the API, silently. Usage: the API reports `input_tokens` without the cached ones; the
adapter reports `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` as
Keel's `input_tokens` (every prompt token, as with OpenAI), and the two cache counts as
`cached_input_tokens` and `cache_write_tokens`.

Replies: text blocks are joined in order (no separator: they are consecutive pieces of one
reply); `tool_use` blocks become `ToolCall`s whose `arguments` is `json.dumps(input)`. Other
block kinds (thinking, server tools) carry nothing the engine uses and are skipped.

Stop reasons: `end_turn`, `tool_use`, `max_tokens` and `refusal` keep their names;
`stop_sequence` is a normal end (`end_turn`); `model_context_window_exceeded` truncated the
reply like `max_tokens` and is reported as such; a missing reason is `end_turn`; any other
reason (e.g. `pause_turn`) is passed through unchanged.

Streams: the wire sequence is `message_start`, then per content block `content_block_start`,
`content_block_delta`s and `content_block_stop`, then `message_delta` (stop reason, output
usage) and `message_stop`. `StreamAssembler.feed` turns each event into zero or more
`TextDelta` / `ToolCallDelta` values:

    text_delta                       -> TextDelta(text)
    content_block_start (tool_use)   -> ToolCallDelta(index, id, name)
    input_json_delta                 -> ToolCallDelta(index, arguments=partial_json)

`ToolCallDelta.index` counts tool calls within the reply (0, 1, ...), as in the OpenAI
adapter, not Anthropic's content-block index (which also counts text blocks).
`StreamAssembler.response` gives the assembled reply; a tool call whose input arrived in no
delta keeps the JSON of the start block's `input` (`{}` for an empty one).

Errors: SDK failures map onto Keel's model error tree.

    anthropic SDK                                   Keel
    RateLimitError (429, rate_limit_error)          RateLimited
    InternalServerError, any 5xx, 529 overloaded,   ProviderUnavailable
      api_error, APIConnectionError
    APITimeoutError, 408                            ModelTimeout
    BadRequestError and other 4xx                   InvalidModelRequest
      ... "prompt is too long" / context limit      ContextTooLong
    AuthenticationError, PermissionDeniedError,     AuthenticationFailed
      no credentials configured

An `error` event inside a stream arrives with the HTTP status of the stream (200); it is
classified by its `error.type` and given the status Anthropic documents for that type
(`overloaded_error` -> 529, ...). Transport failures the SDK does not wrap (a read timeout
or a dropped connection while a stream is being read) map like their wrapped forms.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, cast

import anthropic
from anthropic.types import (
    CacheControlEphemeralParam,
    ContentBlockParam,
    InputJSONDelta,
    MessageParam,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    TextBlock,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
    ToolUseBlockParam,
)
from anthropic.types import Message as WireMessage
from anthropic.types import MessageDeltaUsage as WireDeltaUsage
from anthropic.types import TextDelta as WireTextDelta
from anthropic.types import Usage as WireUsage

from keel.llm.anthropic_errors import PROVIDER, TRANSLATED, missing_credentials, translate
from keel.llm.errors import (
    ModelError,
    ProviderUnavailable,
    without_secret,
)
from keel.llm.json_body import extra_body as merged_extra_body
from keel.llm.port import (
    AssistantChatMessage,
    Message,
    ModelRequest,
    ModelResponse,
    PromptCache,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from keel.project.model_params import ModelParams


class AnthropicModel:
    """A `StreamingModel` answering through the Anthropic Messages API.

    `client` injects a preconfigured `AsyncAnthropic` (then `api_key` and `base_url` are not
    used); it is copied with retries off and this adapter's `timeout`. Otherwise the client is
    built on the first request; without `api_key` the SDK reads `ANTHROPIC_API_KEY` (or its
    other credential sources). `name` identifies the adapter (default `anthropic:<model>`).
    `params` (from the model entry) sends `temperature`, `top_p` and `stop` (as
    `stop_sequences`) when set, and its provider extras, with `extra_body` over them, as
    further body keys (e.g. `top_k`); `max_tokens` is its own argument.
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_tokens: int = 1024,
        params: ModelParams | None = None,
        extra_body: Mapping[str, object] | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        name: str | None = None,
    ) -> None:
        self._settings = _ClientSettings(api_key=api_key, base_url=base_url, timeout=timeout)
        self._client = (
            None if client is None else client.with_options(timeout=timeout, max_retries=0)
        )
        self._model = model
        self._max_tokens = max_tokens
        self._params = params or ModelParams()
        # This SDK has no `temperature` / `top_p` arguments: they travel in the body.
        sampling = {"temperature": self._params.temperature, "top_p": self._params.top_p}
        named = {key: value for key, value in sampling.items() if value is not None}
        self._extra_body = merged_extra_body({**named, **self._params.extra}, extra_body)
        self._name = name or f"{PROVIDER}:{model}"

    @property
    def name(self) -> str:
        """How this model is named in events and logs."""
        return self._name

    @property
    def model(self) -> str:
        """The model id requested from the API."""
        return self._model

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One Messages API round trip; raises `keel.llm.ModelError` on any failure."""
        try:
            return await self._complete(request)
        except ModelError as error:
            without_secret(error, self._api_key())
            raise

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield text and tool-call deltas as they arrive, then `StreamDone`."""
        try:
            async for event in self._stream(request):
                yield event
        except ModelError as error:
            without_secret(error, self._api_key())
            raise

    def _api_key(self) -> str | None:
        """The key sent (the SDK may have found it in the environment)."""
        return self._client.api_key if self._client is not None else self._settings.api_key

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        params = to_anthropic(request)
        try:
            message = await self._create(params, stream=False)
        except TRANSLATED as error:
            raise translate(error) from error
        except TypeError as error:
            _reraise_missing_credentials(error)
        if not isinstance(message, anthropic.types.Message):  # pragma: no cover - SDK contract
            raise ProviderUnavailable(f"{PROVIDER}: unexpected reply", provider=PROVIDER)
        return from_message(message)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        params = to_anthropic(request)
        assembler = StreamAssembler()
        try:
            events = await self._create(params, stream=True)
            if not isinstance(events, anthropic.AsyncStream):  # pragma: no cover
                raise ProviderUnavailable(f"{PROVIDER}: unexpected reply", provider=PROVIDER)
            try:
                async for event in events:
                    for delta in assembler.feed(event):
                        yield delta
            finally:
                await events.close()
        except TRANSLATED as error:
            raise translate(error) from error
        except TypeError as error:
            _reraise_missing_credentials(error)
        if not assembler.finished:
            raise ProviderUnavailable(
                f"{PROVIDER}: the stream ended before message_stop", provider=PROVIDER
            )
        yield StreamDone(response=assembler.response())

    async def _create(
        self, params: AnthropicRequest, *, stream: bool
    ) -> anthropic.types.Message | anthropic.AsyncStream[RawMessageStreamEvent]:
        p = self._params
        return await self._sdk_client().messages.create(
            model=self._model,
            max_tokens=self._max_tokens,
            messages=params.messages,
            stream=stream,
            system=_system_param(params.system),
            tools=params.tools if params.tools else anthropic.omit,
            stop_sequences=anthropic.omit if p.stop is None else list(p.stop),
            extra_body=self._extra_body,
        )

    def _sdk_client(self) -> anthropic.AsyncAnthropic:
        # Built on first use: the SDK resolves credentials (environment, profile files) in its
        # constructor and may raise there; inside a request that failure maps like any other.
        if self._client is None:
            settings = self._settings
            self._client = anthropic.AsyncAnthropic(
                api_key=settings.api_key,
                base_url=settings.base_url,
                timeout=settings.timeout,
                max_retries=0,
            )
        return self._client


@dataclass(frozen=True, kw_only=True, slots=True)
class _ClientSettings:
    api_key: str | None
    base_url: str | None
    timeout: float


def _system_param(
    system: str | tuple[TextBlockParam, ...] | None,
) -> str | list[TextBlockParam] | anthropic.Omit:
    if system is None:
        return anthropic.omit
    return system if isinstance(system, str) else list(system)


def _reraise_missing_credentials(error: TypeError) -> NoReturn:
    mapped = missing_credentials(error)
    if mapped is None:
        raise error
    raise mapped from error


# Requests: ModelRequest -> Messages API parameters.

Role = Literal["user", "assistant"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AnthropicRequest:
    """The request-specific parameters of `messages.create`."""

    system: str | tuple[TextBlockParam, ...] | None
    """Text, or text blocks when a cache breakpoint splits it."""
    messages: tuple[MessageParam, ...]
    tools: tuple[ToolParam, ...]


EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
"""The cache breakpoint marker (the API's default lifetime, five minutes)."""


def to_anthropic(request: ModelRequest) -> AnthropicRequest:
    """The Messages API parameters for `request`, with cache breakpoints when it asks."""
    caching = request.cache != PromptCache()
    tools = [tool_param(tool) for tool in request.tools]
    if caching and tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    turns = _turns(request.messages)
    if caching:
        _mark_history(turns, request.messages)
    return AnthropicRequest(
        system=_system(request, caching=caching),
        messages=tuple(turns),
        tools=tuple(tools),
    )


def _mark_history(turns: list[MessageParam], messages: Sequence[Message]) -> None:
    """A breakpoint on the last block before the request's closing system text (the
    prompt's volatile part, which `keel.loop.model_call` puts after the history), so the
    next request reuses the whole conversation so far. Nothing when there is no such text."""
    last = messages[-1] if len(messages) > _leading_system(messages) else None
    if last is None or last["role"] != "system" or not last["content"] or not turns:
        return
    blocks: list[Any] = list(turns[-1]["content"])
    closing = next(
        (i for i in range(len(blocks) - 1, -1, -1) if blocks[i].get("text") == last["content"]),
        None,
    )
    if closing is None:
        return
    if closing > 0:
        blocks[closing - 1] = {**blocks[closing - 1], "cache_control": EPHEMERAL}
        turns[-1] = cast(MessageParam, {**turns[-1], "content": blocks})
    elif len(turns) > 1:
        before: list[Any] = list(turns[-2]["content"])
        before[-1] = {**before[-1], "cache_control": EPHEMERAL}
        turns[-2] = cast(MessageParam, {**turns[-2], "content": before})


def _leading_system(messages: Sequence[Message]) -> int:
    """How many messages open the request as system messages (the `system` parameter)."""
    count = 0
    while count < len(messages) and messages[count]["role"] == "system":
        count += 1
    return count


def _system(request: ModelRequest, *, caching: bool) -> str | tuple[TextBlockParam, ...] | None:
    opening = request.messages[: _leading_system(request.messages)]
    texts = [m["content"] for m in opening if m["content"]]
    if not texts:
        return None
    text = "\n\n".join(texts)
    stable = request.cache.stable_system_chars
    opens = bool(request.messages) and request.messages[0]["role"] == "system"
    if not (caching and opens and 0 < stable <= len(text)):
        return text
    head: TextBlockParam = {"type": "text", "text": text[:stable], "cache_control": EPHEMERAL}
    if stable == len(text):
        return (head,)
    # The rest starts with the blank line that joined the parts: the text read is unchanged.
    return (head, {"type": "text", "text": text[stable:]})


def _turns(messages: Sequence[Message]) -> list[MessageParam]:
    turns: list[tuple[Role, list[ContentBlockParam]]] = []
    for message in messages[_leading_system(messages) :]:
        converted = _blocks(message)
        if converted is None or not converted[1]:
            continue
        role, blocks = converted
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return [_message_param(role, blocks) for role, blocks in turns]


def _blocks(message: Message) -> tuple[Role, list[ContentBlockParam]] | None:
    if message["role"] == "system":
        # A system message after the conversation (the prompt's volatile part) can only be
        # read in a user turn: the API takes system text before the messages alone.
        return "user", _text(message["content"])
    if message["role"] == "user":
        return "user", _text(message["content"])
    if message["role"] == "tool":
        result: ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": message["tool_call_id"],
            "content": message["content"],
        }
        return "user", [result]
    return "assistant", _assistant_blocks(message)


def _assistant_blocks(message: AssistantChatMessage) -> list[ContentBlockParam]:
    blocks = _text(message["content"])
    for call in message.get("tool_calls", []):
        block: ToolUseBlockParam = {
            "type": "tool_use",
            "id": call["id"],
            "name": call["function"]["name"],
            "input": tool_input(call["function"]["arguments"]),
        }
        blocks.append(block)
    return blocks


def _text(content: str | None) -> list[ContentBlockParam]:
    if not content:
        return []
    block: TextBlockParam = {"type": "text", "text": content}
    return [block]


def _message_param(role: Role, blocks: list[ContentBlockParam]) -> MessageParam:
    if role == "assistant":
        return {"role": "assistant", "content": blocks}
    # tool_result blocks must open a user turn; the sort is stable for the rest.
    ordered = sorted(blocks, key=lambda block: block["type"] != "tool_result")
    return {"role": "user", "content": ordered}


def tool_input(arguments: str) -> dict[str, object]:
    """The `tool_use.input` for raw `arguments` JSON: the object, or `{}` if it is not one."""
    try:
        parsed: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return _plain(parsed) if isinstance(parsed, dict) else {}


def tool_param(tool: ToolSchema) -> ToolParam:
    """A tool definition; the schema gets `"type": "object"` when it does not say."""
    schema: dict[str, object] = {"type": "object", **_plain(tool.parameters)}
    param: ToolParam = {"name": tool.name, "input_schema": schema}
    if tool.description:
        param["description"] = tool.description
    return param


def _plain(mapping: Mapping[str, object]) -> dict[str, object]:
    """A JSON-serialisable copy (read-only mappings and tuples become dicts and lists)."""
    return {str(key): _plain_value(value) for key, value in mapping.items()}


def _plain_value(value: object) -> object:
    if isinstance(value, Mapping):
        return _plain(value)
    if isinstance(value, list | tuple):
        return [_plain_value(item) for item in value]
    return value


# Replies: a complete Messages API reply -> ModelResponse.

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "stop_sequence": "end_turn",
    "model_context_window_exceeded": "max_tokens",
}


def stop_reason(reason: str | None) -> str:
    """Keel's stop reason for an Anthropic `stop_reason`."""
    if reason is None:
        return "end_turn"
    return _STOP_REASONS.get(reason, reason)


def arguments_text(tool_input: object) -> str:
    """A tool call's `arguments` JSON text for a `tool_use.input` value."""
    return json.dumps(tool_input if tool_input is not None else {}, ensure_ascii=False)


def from_message(message: WireMessage) -> ModelResponse:
    """The `ModelResponse` for a complete (non-streamed) Messages API reply."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            calls.append(
                ToolCall(id=block.id, name=block.name, arguments=arguments_text(block.input))
            )
    text = "".join(texts)
    return ModelResponse(
        text=text or None,
        tool_calls=tuple(calls),
        stop_reason=stop_reason(message.stop_reason),
        usage=usage_of(message.usage),
        model=message.model,
    )


def usage_of(usage: WireUsage | WireDeltaUsage) -> Usage:
    """Keel's usage for a reply's (or a stream delta's) usage: `input_tokens` counts the
    cached prompt tokens too, which the API reports apart."""
    read = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    return Usage(
        input_tokens=(usage.input_tokens or 0) + read + written,
        output_tokens=usage.output_tokens or 0,
        cached_input_tokens=read,
        cache_write_tokens=written,
    )


# Streams: Messages API stream events -> stream deltas and the assembled reply.


@dataclass(kw_only=True, slots=True)
class _PendingCall:
    index: int
    id: str
    name: str
    start_input: object
    arguments: str = ""


class StreamAssembler:
    """Running state of one streamed reply."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}  # by content-block index
        self._model = ""
        self._usage = Usage()
        self._stop_reason: str | None = None
        self.finished = False
        """Whether `message_stop` has arrived."""

    def feed(self, event: RawMessageStreamEvent) -> list[TextDelta | ToolCallDelta]:
        """The deltas `event` carries (often none)."""
        if isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        if isinstance(event, RawContentBlockStartEvent):
            return self._block_start(event)
        if isinstance(event, RawMessageStartEvent):
            self._model = event.message.model
            self._usage = usage_of(event.message.usage)
        elif isinstance(event, RawMessageDeltaEvent):
            self._stop_reason = event.delta.stop_reason
            self._usage = self._delta_usage(event.usage)
        elif isinstance(event, RawMessageStopEvent):
            self.finished = True
        return []

    def _delta_usage(self, usage: WireDeltaUsage) -> Usage:
        """`message_delta` counts are cumulative; a count it leaves out (null) keeps the one
        `message_start` gave."""
        known = self._usage
        read = usage.cache_read_input_tokens
        written = usage.cache_creation_input_tokens
        read = known.cached_input_tokens if read is None else read
        written = known.cache_write_tokens if written is None else written
        fresh = usage.input_tokens
        if fresh is None:
            fresh = known.input_tokens - known.cached_input_tokens - known.cache_write_tokens
        return Usage(
            input_tokens=fresh + read + written,
            output_tokens=usage.output_tokens,
            cached_input_tokens=read,
            cache_write_tokens=written,
        )

    def _block_start(self, event: RawContentBlockStartEvent) -> list[TextDelta | ToolCallDelta]:
        block = event.content_block
        if not isinstance(block, ToolUseBlock):
            return []
        call = _PendingCall(
            index=len(self._calls), id=block.id, name=block.name, start_input=block.input
        )
        self._calls[event.index] = call
        return [ToolCallDelta(index=call.index, id=call.id, name=call.name)]

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[TextDelta | ToolCallDelta]:
        delta = event.delta
        if isinstance(delta, WireTextDelta):
            self._text.append(delta.text)
            return [TextDelta(text=delta.text)] if delta.text else []
        call = self._calls.get(event.index)
        if isinstance(delta, InputJSONDelta) and call is not None:
            call.arguments += delta.partial_json
            if delta.partial_json:
                return [ToolCallDelta(index=call.index, arguments=delta.partial_json)]
        return []

    def response(self) -> ModelResponse:
        """The reply assembled from the events fed so far."""
        calls = tuple(
            ToolCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments or arguments_text(call.start_input),
            )
            for call in self._calls.values()
        )
        text = "".join(self._text)
        return ModelResponse(
            text=text or None,
            tool_calls=calls,
            stop_reason=stop_reason(self._stop_reason),
            usage=self._usage,
            model=self._model,
        )
