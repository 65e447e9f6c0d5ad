"""`OpenAIChatModel`: the Chat Completions adapter, for OpenAI and OpenAI-compatible servers.

    model = OpenAIChatModel(model="gpt-4o-mini", api_key=key)
    local = OpenAIChatModel(model="qwen2.5", base_url="http://127.0.0.1:8080/v1")  # llama.cpp
    reply = await model.complete(ModelRequest(messages=(user_message("hi"),)))

Built on the official `openai` SDK (`AsyncOpenAI.chat.completions.create`) with the SDK's
own retries off (`max_retries=0`): retrying is `keel.llm.resilience.RetryingModel`'s job,
so one policy (with jitter, and visible in tests) governs every provider. Every SDK
exception is translated at this boundary.

OpenAI-compatible servers (llama.cpp server, vLLM, Ollama at `http://localhost:11434/v1`):

- No key is needed locally, but the SDK insists on one, so a placeholder is sent when
  `api_key` is None. The adapter never reads `OPENAI_API_KEY` itself: keys come from the
  configuration (`api_key_env`), so a real key is never sent to a local server by accident.
- Some servers omit `usage` (zero tokens are reported), the response `model` (the
  configured id is reported) or tool call ids (`call_<n>` by position is generated).
- Streams ask for `stream_options: {"include_usage": true}`; servers that ignore it
  simply yield no usage. A stream that ends without a `finish_reason` was cut short (or
  the server ignored `stream: true`) and raises `ProviderUnavailable` rather than pass off
  a partial reply as whole. `[DONE]` itself is not required.
- Reasoning text some servers stream as `reasoning_content` is not part of the reply.
- `extra_body` is merged into the request JSON for server-specific settings (e.g. vLLM's
  `chat_template_kwargs`, llama.cpp's sampling options); `reasoning_effort` is sent only
  when set, since non-reasoning models reject it.
- `params` (`keel.project.model_params.ModelParams`, from the model entry) sends
  `temperature`, `max_tokens`, `top_p`, `seed` and `stop` when set, and its provider extras
  as further body keys (`extra_body` wins over an extra of the same name).

Prompt caching: OpenAI caches prompt prefixes by itself; a request's `cache.key`
(`keel.llm.port.PromptCache`, one per conversation) is sent as `prompt_cache_key`, which
routes the conversation's requests to the same cache, when `send_cache_key` is on (the
factory turns it on for `provider: openai` only: other servers may reject unknown fields).
`usage.prompt_tokens_details.cached_tokens` becomes `Usage.cached_input_tokens` (already
counted in `prompt_tokens`, as `input_tokens`); servers that leave it out report 0.

Wire shapes. Requests: messages are already in the Chat Completions shape and pass through
unchanged; each `ToolSchema` becomes `{"type": "function", "function": {name, description,
parameters}}`. Replies: the first choice becomes a `ModelResponse`.

Lenient on purpose, because OpenAI-compatible servers (llama.cpp, vLLM, Ollama) differ:
a missing tool call id becomes `call_<n>` (`n` is the call's position in the reply), a
missing `usage` becomes zero tokens, a missing `model` becomes the configured model id,
and `finish_reason: "stop"` next to tool calls (some servers send it) counts as
`tool_use`.

Streams: each `chat.completion.chunk`'s first choice gives a `TextDelta` per non-empty
`content` piece and a `ToolCallDelta` per `tool_calls` entry: the first piece of a call
carries its `index`, `id` and `name`, later pieces only `arguments`. The usage-only chunk
OpenAI sends last when asked with `stream_options: {"include_usage": true}` (it has no
choices) sets the usage. A call without an `id` gets `call_<index>`; an entry without an
`index` starts a new call when it names one and continues the latest call otherwise; ids
and names repeated on every piece (some proxies do that) are not repeated in the deltas.

Errors: SDK exceptions map onto Keel's model error tree (`keel.llm.errors`).

    APITimeoutError                         -> ModelTimeout
    APIConnectionError                      -> ProviderUnavailable   (no status)
    RateLimitError (429)                    -> RateLimited
    AuthenticationError / PermissionDenied  -> AuthenticationFailed  (401 / 403)
    408                                     -> ModelTimeout
    409, 5xx (InternalServerError)          -> ProviderUnavailable   (what the SDK itself retries)
    400 and other 4xx                       -> InvalidModelRequest, or ContextTooLong when the
                                               error code, type or message says the prompt
                                               does not fit (413 always does)
    an `error` event in a stream            -> as a 4xx body by its code/message, else
                                               ProviderUnavailable
    anything else the SDK raises            -> ProviderError (not retryable)

OpenAI-compatible servers word context overflow differently (OpenAI and vLLM: "maximum
context length is ..."; llama.cpp: "exceeds the available context size", type
`exceed_context_size_error`), so the message is matched as well as the code.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import openai
from openai import AsyncStream
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallUnion,
)
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall
from openai.types.shared import ReasoningEffort

from keel.llm.errors import (
    ModelError,
    without_secret,
)
from keel.llm.json_body import extra_body as merged_extra_body
from keel.llm.json_body import plain_json
from keel.llm.openai_errors import malformed_response, map_openai_error
from keel.llm.port import (
    Message,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from keel.project.model_params import ModelParams

PLACEHOLDER_API_KEY = "sk-no-key-required"
"""Sent when no `api_key` is given: local OpenAI-compatible servers ignore it."""

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIChatModel:
    """A `StreamingModel` answering through the Chat Completions API."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        extra_body: Mapping[str, object] | None = None,
        reasoning_effort: str | None = None,
        params: ModelParams | None = None,
        client: openai.AsyncOpenAI | None = None,
        name: str | None = None,
        send_cache_key: bool = True,
    ) -> None:
        """`client`, when given, is used instead of building one from `api_key`,
        `base_url` and `timeout` (its retries are still turned off). `send_cache_key`
        sends a request's `cache.key` as `prompt_cache_key`."""
        self._send_cache_key = send_cache_key
        self.model = model
        """The model id sent with every request."""
        self.name = name or model
        """A label for logs and events; the model id unless given."""
        self._params = params or ModelParams()
        self._extra_body = merged_extra_body(self._params.extra, extra_body)
        self._reasoning_effort = cast(ReasoningEffort, reasoning_effort)
        self._owns_client = client is None
        if client is not None:
            self._client = client.with_options(max_retries=0)
        else:
            self._client = openai.AsyncOpenAI(
                api_key=api_key or PLACEHOLDER_API_KEY,
                base_url=base_url or DEFAULT_BASE_URL,
                timeout=timeout,
                max_retries=0,
            )

    async def aclose(self) -> None:
        """Close the HTTP connections of the client this model built (not an injected one)."""
        if self._owns_client:
            await self._client.close()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One Chat Completions round trip; raises a `keel.llm.ModelError` on failure."""
        try:
            completion = await self._create(request, stream=False)
            return response_of(completion, model=self.model)
        except ModelError as error:
            without_secret(error, self._client.api_key)
            raise

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield text and tool-call deltas as the chunks arrive, then `StreamDone`."""
        try:
            async for event in self._stream(request):
                yield event
        except ModelError as error:
            without_secret(error, self._client.api_key)
            raise

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        assembler = StreamAssembler(model=self.model)
        chunks = await self._create(request, stream=True)
        if not isinstance(chunks, AsyncStream):
            raise malformed_response(f"expected an event stream, got {chunks!r:.200}")
        try:
            async for chunk in _translated(chunks):
                for event in assembler.feed(chunk):
                    yield event
        finally:
            await chunks.close()
        if not assembler.finished:
            raise malformed_response("the stream ended before a finish_reason")
        yield StreamDone(response=assembler.response())

    async def _create(self, request: ModelRequest, *, stream: bool) -> object:
        """`chat.completions.create` with this model's settings, SDK errors translated."""
        try:
            return await self._call_sdk(request, stream=stream)
        except openai.OpenAIError as error:
            raise map_openai_error(error) from error
        except ValueError as error:  # a body that claims to be JSON and is not
            raise malformed_response(str(error)) from error

    async def _call_sdk(self, request: ModelRequest, *, stream: bool) -> object:
        """The SDK call; streams ask for the usage chunk."""
        # The SDK's overloads pick the return type from a literal `stream`, hence two calls.
        completions = self._client.chat.completions
        tools = tools_param(request.tools) if request.tools else openai.omit
        effort = self._reasoning_effort if self._reasoning_effort else openai.omit
        extra_body = self._extra_body
        p = self._params
        key = request.cache.key if self._send_cache_key else None
        cache_key = openai.omit if key is None else key
        if stream:
            return await completions.create(
                model=self.model,
                messages=messages_param(request.messages),
                tools=tools,
                reasoning_effort=effort,
                temperature=openai.omit if p.temperature is None else p.temperature,
                max_tokens=openai.omit if p.max_tokens is None else p.max_tokens,
                top_p=openai.omit if p.top_p is None else p.top_p,
                seed=openai.omit if p.seed is None else p.seed,
                stop=openai.omit if p.stop is None else list(p.stop),
                stream=True,
                stream_options={"include_usage": True},
                prompt_cache_key=cache_key,
                extra_body=extra_body,
            )
        return await completions.create(
            model=self.model,
            messages=messages_param(request.messages),
            tools=tools,
            reasoning_effort=effort,
            temperature=openai.omit if p.temperature is None else p.temperature,
            max_tokens=openai.omit if p.max_tokens is None else p.max_tokens,
            top_p=openai.omit if p.top_p is None else p.top_p,
            seed=openai.omit if p.seed is None else p.seed,
            stop=openai.omit if p.stop is None else list(p.stop),
            prompt_cache_key=cache_key,
            extra_body=extra_body,
        )


async def _translated(
    chunks: AsyncStream[ChatCompletionChunk],
) -> AsyncIterator[ChatCompletionChunk]:
    """The SDK stream with its exceptions (mid-stream errors, timeouts) translated."""
    iterator = chunks.__aiter__()
    while True:
        try:
            chunk = await anext(iterator)
        except StopAsyncIteration:
            return
        except openai.OpenAIError as error:
            raise map_openai_error(error) from error
        except ValueError as error:  # an event whose data is not JSON
            raise malformed_response(str(error)) from error
        yield chunk


# Wire shapes: Keel's model port values <-> Chat Completions.

STOP_REASONS: Mapping[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""Chat Completions `finish_reason` -> Keel `stop_reason`; other values pass through as-is."""


def messages_param(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """The request's messages, unchanged (Keel's message dicts are the wire shape)."""
    return cast("list[ChatCompletionMessageParam]", [dict(message) for message in messages])


def tools_param(tools: Sequence[ToolSchema]) -> list[ChatCompletionFunctionToolParam]:
    """Keel tool schemas as Chat Completions `function` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": cast("dict[str, object]", plain_json(tool.parameters)),
            },
        }
        for tool in tools
    ]


def stop_reason(finish_reason: str | None, *, has_tool_calls: bool) -> str:
    """The Keel stop reason for a `finish_reason` (None when a server leaves it out)."""
    mapped = STOP_REASONS.get(finish_reason or "stop", finish_reason or "end_turn")
    if has_tool_calls and mapped == "end_turn":
        return "tool_use"
    return mapped


def call_id(raw: str | None, position: int) -> str:
    """The server's tool call id, or the deterministic `call_<position>` when it sent none."""
    return raw if raw else f"call_{position}"


def usage_of(usage: CompletionUsage | None) -> Usage:
    """Token counts; zero for servers that report none (cached ones too)."""
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = details.cached_tokens if details is not None else None
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_input_tokens=cached or 0,
    )


def response_of(completion: object, *, model: str) -> ModelResponse:
    """The first choice of a `chat.completion` as a `ModelResponse`.

    Raises `ProviderUnavailable` when the payload is not a completion with a choice (a
    server answering HTML, or an empty `choices` list)."""
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise malformed_response(
            f"expected a chat.completion with choices, got {completion!r:.200}"
        )
    choice = completion.choices[0]
    message = choice.message
    if message is None:
        raise malformed_response("the first choice has no message")
    calls = tuple(_tool_call(call, n) for n, call in enumerate(message.tool_calls or ()))
    text = message.content or None
    refused = text is None and bool(message.refusal)
    return ModelResponse(
        text=message.refusal if refused else text,
        tool_calls=calls,
        stop_reason="refusal"
        if refused
        else stop_reason(choice.finish_reason, has_tool_calls=bool(calls)),
        usage=usage_of(completion.usage),
        model=completion.model or model,
    )


def _tool_call(call: ChatCompletionMessageToolCallUnion, position: int) -> ToolCall:
    if isinstance(call, ChatCompletionMessageFunctionToolCall):
        return ToolCall(
            id=call_id(call.id, position),
            name=call.function.name or "",
            arguments=call.function.arguments or "",
        )
    # A `custom` (free-text) tool call: Keel only offers function tools, but keep it visible.
    return ToolCall(
        id=call_id(call.id, position), name=call.custom.name, arguments=call.custom.input
    )


# Streams: `chat.completion.chunk`s -> stream events and the assembled reply.


@dataclass(slots=True)
class _PartialCall:
    """A tool call being assembled (mutable working state, never leaves this module)."""

    id: str
    name: str
    arguments: str = ""


class StreamAssembler:
    """Feed it chunks in order; it returns the events to yield, then `response()`."""

    def __init__(self, *, model: str) -> None:
        self._model = model
        self._served_model = ""
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._finish_reason: str | None = None
        self._usage = Usage()

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        """The events one chunk carries (possibly none)."""
        if chunk.model and not self._served_model:
            self._served_model = chunk.model
        if chunk.usage is not None:
            self._usage = usage_of(chunk.usage)
        events: list[StreamEvent] = []
        for choice in chunk.choices or ():
            if choice.index:  # n > 1 is never requested; only the first choice counts
                continue
            if choice.delta is not None:
                events.extend(self._delta(choice.delta))
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
        return events

    @property
    def finished(self) -> bool:
        """Whether a `finish_reason` arrived: a stream cut short never sends one."""
        return self._finish_reason is not None

    def response(self) -> ModelResponse:
        """The whole reply, assembled from everything fed so far."""
        calls = tuple(
            ToolCall(id=call.id, name=call.name, arguments=call.arguments)
            for _, call in sorted(self._calls.items())
        )
        text = "".join(self._text) or None
        refused = text is None and bool(self._refusal)
        reason = stop_reason(self._finish_reason, has_tool_calls=bool(calls))
        return ModelResponse(
            text="".join(self._refusal) if refused else text,
            tool_calls=calls,
            stop_reason="refusal" if refused else reason,
            usage=self._usage,
            model=self._served_model or self._model,
        )

    def _delta(self, delta: ChoiceDelta) -> Iterator[StreamEvent]:
        if delta.content:
            self._text.append(delta.content)
            yield TextDelta(text=delta.content)
        if delta.refusal:
            self._refusal.append(delta.refusal)
            yield TextDelta(text=delta.refusal)
        for part in delta.tool_calls or ():
            yield self._tool_part(part)

    def _tool_part(self, part: ChoiceDeltaToolCall) -> ToolCallDelta:
        function = part.function
        name = (function.name if function is not None else None) or ""
        arguments = (function.arguments if function is not None else None) or ""
        index = self._index_of(part, starts_call=bool(part.id or name))
        call = self._calls.get(index)
        if call is None:
            call = _PartialCall(id=call_id(part.id, index), name=name, arguments=arguments)
            self._calls[index] = call
            return ToolCallDelta(index=index, id=call.id, name=name or None, arguments=arguments)
        call.arguments += arguments
        late_name = name if name and not call.name else None
        if late_name:
            call.name = late_name
        return ToolCallDelta(index=index, name=late_name, arguments=arguments)

    def _index_of(self, part: ChoiceDeltaToolCall, *, starts_call: bool) -> int:
        if isinstance(part.index, int):
            return part.index
        known = [n for n, call in self._calls.items() if part.id and call.id == part.id]
        if known:
            return known[0]
        if starts_call or not self._calls:
            return len(self._calls)
        return max(self._calls)
