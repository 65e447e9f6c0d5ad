"""Retries and fallbacks around any `Model`: `RetryingModel` and `FallbackModel`.

    group = FallbackModel([
        RetryingModel(OpenAIChatModel(model="gpt-4o-mini", api_key=key)),
        RetryingModel(OpenAIChatModel(model="qwen2.5", base_url="http://127.0.0.1:8080/v1")),
    ])

`RetryingModel` retries errors marked `retryable` (rate limits, 5xx, connection failures,
timeouts) with exponential backoff and full jitter; `FallbackModel` moves to the next model
when one fails in a way another model might not (see `falls_back`). A stream is retried or
handed to a fallback only while nothing has been yielded: once a delta has reached the
consumer, switching models would splice two different replies together.

Both also stream models that cannot: a `Model` without `stream` yields its whole reply as
a single `StreamDone` (`stream_reply`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import cast

from keel.llm.errors import (
    AuthenticationFailed,
    ContextTooLong,
    ModelError,
    ProviderUnavailable,
)
from keel.llm.port import Model, ModelRequest, ModelResponse, StreamDone, StreamEvent

Sleep = Callable[[float], Awaitable[None]]
"""How to wait `seconds` (`asyncio.sleep`; tests inject a recorder)."""


async def stream_reply(model: Model, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
    """`model.stream(request)` when the model streams; else its reply as one `StreamDone`.
    Closing this generator closes the model's stream (releasing its connection)."""
    stream = getattr(model, "stream", None)
    if not callable(stream):
        yield StreamDone(response=await model.complete(request))
        return
    events = cast(Callable[[ModelRequest], AsyncIterator[StreamEvent]], stream)(request)
    try:
        async for event in events:
            yield event
    finally:
        aclose = getattr(events, "aclose", None)
        if callable(aclose):
            await aclose()


class RetryingModel:
    """Retries `retryable` model errors with exponential backoff and full jitter.

    Before retry `n` (0-based) it waits `rng.uniform(0, min(max_delay, base_delay * 2**n))`
    seconds. `attempts` counts every try, the first included; when they are used up, or the
    error is not retryable, the last error is raised as it is."""

    def __init__(
        self,
        inner: Model,
        *,
        attempts: int = 3,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, not {attempts}")
        self.inner = inner
        self.attempts = attempts
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._sleep = sleep
        self._rng = rng if rng is not None else random.Random()

    def delay(self, retry: int) -> float:
        """A jittered wait before retry number `retry` (0 for the first retry)."""
        ceiling = min(self._max_delay, self._base_delay * 2 ** min(retry, 64))
        return self._rng.uniform(0, ceiling)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The inner model's reply, retrying retryable errors."""
        retry = 0
        while True:
            try:
                return await self.inner.complete(request)
            except ModelError as error:
                await self._back_off(error, retry)
            retry += 1

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The inner model's stream, retried only while it has yielded nothing."""
        retry = 0
        while True:
            started = False
            try:
                async with aclosing(stream_reply(self.inner, request)) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except ModelError as error:
                if started:
                    raise
                await self._back_off(error, retry)
            retry += 1

    async def _back_off(self, error: ModelError, retry: int) -> None:
        """Wait before retry `retry`, or re-raise `error` when it must not be retried."""
        if not error.retryable or retry + 1 >= self.attempts:
            raise error
        await self._sleep(self.delay(retry))


def falls_back(error: ModelError) -> bool:
    """Whether another model may succeed where one failed with `error`: any retryable error,
    refused credentials, an unavailable provider, or a prompt too long (a bigger window may
    fit). Other invalid requests would fail the same way everywhere."""
    fallback_kinds = (AuthenticationFailed, ProviderUnavailable, ContextTooLong)
    return error.retryable or isinstance(error, fallback_kinds)


class FallbackModel:
    """Tries `models` in order, moving on after an error that `falls_back`; the last model's
    error (or the first error that does not fall back) is raised."""

    def __init__(self, models: Sequence[Model]) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        self.models = tuple(models)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The first reply any model gives."""
        for model in self.models[:-1]:
            try:
                return await model.complete(request)
            except ModelError as error:
                if not falls_back(error):
                    raise
        return await self.models[-1].complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The first stream that starts; falls back only before its first event."""
        for model in self.models[:-1]:
            started = False
            try:
                async with aclosing(stream_reply(model, request)) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except ModelError as error:
                if started or not falls_back(error):
                    raise
        async with aclosing(stream_reply(self.models[-1], request)) as events:
            async for event in events:
                yield event
