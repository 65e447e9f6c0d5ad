"""`OpenAIChatModel`: the Chat Completions adapter, for OpenAI and OpenAI-compatible servers.

    model = OpenAIChatModel(model="gpt-4o-mini", api_key=key)
    local = OpenAIChatModel(model="qwen2.5", base_url="http://127.0.0.1:8080/v1")  # llama.cpp
    reply = await model.complete(ModelRequest(messages=(user_message("hi"),)))

Built on the official `openai` SDK (`AsyncOpenAI.chat.completions.create`) with the SDK's
own retries off (`max_retries=0`): retrying is `keel.llm.resilience.RetryingModel`'s job,
so one policy (with jitter, and visible in tests) governs every provider. Every SDK
exception is translated at this boundary (`keel.llm.openai_errors`).

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
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import cast

import openai
from openai import AsyncStream
from openai.types.chat import ChatCompletionChunk
from openai.types.shared import ReasoningEffort

from keel.llm.errors import ModelError, without_secret
from keel.llm.openai_errors import malformed_response, map_openai_error
from keel.llm.openai_stream import StreamAssembler
from keel.llm.openai_wire import messages_param, plain_json, response_of, tools_param
from keel.llm.port import ModelRequest, ModelResponse, StreamDone, StreamEvent

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
        client: openai.AsyncOpenAI | None = None,
        name: str | None = None,
    ) -> None:
        """`client`, when given, is used instead of building one from `api_key`,
        `base_url` and `timeout` (its retries are still turned off)."""
        self.model = model
        """The model id sent with every request."""
        self.name = name or model
        """A label for logs and events; the model id unless given."""
        self._extra_body = plain_json(extra_body) if extra_body else None
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
        extra_body = cast("dict[str, object] | None", self._extra_body)
        if stream:
            return await completions.create(
                model=self.model,
                messages=messages_param(request.messages),
                tools=tools,
                reasoning_effort=effort,
                stream=True,
                stream_options={"include_usage": True},
                extra_body=extra_body,
            )
        return await completions.create(
            model=self.model,
            messages=messages_param(request.messages),
            tools=tools,
            reasoning_effort=effort,
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
