"""`AnthropicModel`: the Anthropic Messages API adapter, built on the official `anthropic` SDK.

    model = AnthropicModel(model="claude-sonnet-4-5", api_key=key)
    response = await model.complete(request)
    async for event in model.stream(request): ...

Requests are converted by `keel.llm.anthropic_request`, replies by `anthropic_response` and
`anthropic_stream`. The SDK's own retries are off (`max_retries=0`): retrying with backoff
and falling back is Keel's job, one layer up, so one `complete` is one HTTP request. Every SDK
failure leaves this module as a `keel.llm.ModelError` (`keel.llm.anthropic_errors`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import NoReturn

import anthropic
from anthropic.types import RawMessageStreamEvent

from keel.llm.anthropic_errors import (
    PROVIDER,
    TRANSLATED,
    missing_credentials,
    translate,
)
from keel.llm.anthropic_request import AnthropicRequest, to_anthropic
from keel.llm.anthropic_response import from_message
from keel.llm.anthropic_stream import StreamAssembler
from keel.llm.errors import ModelError, ProviderUnavailable, without_secret
from keel.llm.port import ModelRequest, ModelResponse, StreamDone, StreamEvent


class AnthropicModel:
    """A `StreamingModel` answering through the Anthropic Messages API.

    `client` injects a preconfigured `AsyncAnthropic` (then `api_key` and `base_url` are not
    used); it is copied with retries off and this adapter's `timeout`. Otherwise the client is
    built on the first request; without `api_key` the SDK reads `ANTHROPIC_API_KEY` (or its
    other credential sources). `name` identifies the adapter (default `anthropic:<model>`).
    """

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_tokens: int = 1024,
        client: anthropic.AsyncAnthropic | None = None,
        name: str | None = None,
    ) -> None:
        self._settings = _ClientSettings(api_key=api_key, base_url=base_url, timeout=timeout)
        self._client = (
            None if client is None else client.with_options(timeout=timeout, max_retries=0)
        )
        self._model = model
        self._max_tokens = max_tokens
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
        return await self._sdk_client().messages.create(
            model=self._model,
            max_tokens=self._max_tokens,
            messages=params.messages,
            stream=stream,
            system=params.system if params.system is not None else anthropic.omit,
            tools=params.tools if params.tools else anthropic.omit,
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


def _reraise_missing_credentials(error: TypeError) -> NoReturn:
    mapped = missing_credentials(error)
    if mapped is None:
        raise error
    raise mapped from error
