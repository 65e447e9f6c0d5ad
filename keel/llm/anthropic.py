"""`AnthropicModel`: the Anthropic Messages API adapter, built on the official `anthropic` SDK.

    model = AnthropicModel(model="claude-sonnet-4-5", api_key=key)
    response = await model.complete(request)
    async for event in model.stream(request): ...

The SDK's own retries are off (`max_retries=0`): retrying with backoff and falling back is
Keel's job, one layer up, so one `complete` is one HTTP request. Every SDK failure leaves this
module as a `keel.llm.ModelError`.

Requests (`keel.llm.anthropic_request`): a `ModelRequest` becomes Messages API parameters,
with prompt-cache breakpoints when the request asks for them.

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
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import NoReturn

import anthropic
from anthropic.types import (
    InputJSONDelta,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    TextBlock,
    TextBlockParam,
    ToolUseBlock,
)
from anthropic.types import Message as WireMessage
from anthropic.types import MessageDeltaUsage as WireDeltaUsage
from anthropic.types import TextDelta as WireTextDelta
from anthropic.types import Usage as WireUsage

from keel.llm.anthropic_errors import PROVIDER, TRANSLATED, missing_credentials, translate
from keel.llm.anthropic_request import AnthropicRequest, to_anthropic
from keel.llm.errors import (
    ModelError,
    ProviderUnavailable,
    without_secret,
)
from keel.llm.json_body import extra_body as merged_extra_body
from keel.llm.port import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
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
