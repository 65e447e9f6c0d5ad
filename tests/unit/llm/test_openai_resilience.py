"""`RetryingModel` and `FallbackModel` over scripted stand-in models (no waiting: `sleep` is
injected and records the delays)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence

import pytest

from keel.llm import ModelRequest, ModelResponse, user_message
from keel.llm.errors import (
    AuthenticationFailed,
    ContextTooLong,
    InvalidModelRequest,
    ModelError,
    ModelTimeout,
    ProviderUnavailable,
    RateLimited,
)
from keel.llm.port import StreamDone, StreamEvent, TextDelta
from keel.llm.resilience import FallbackModel, RetryingModel, falls_back, stream_reply

REQUEST = ModelRequest(messages=(user_message("hi"),))
Outcome = ModelResponse | ModelError
Script = Sequence[StreamEvent | ModelError]


def reply(text: str) -> ModelResponse:
    return ModelResponse(text=text)


class Stub:
    """Answers `complete` from `outcomes` in order, raising the errors among them."""

    def __init__(self, *outcomes: Outcome) -> None:
        self.outcomes = list(outcomes)
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, ModelError):
            raise outcome
        return outcome


class StreamStub(Stub):
    """Also streams: each call plays the next script, raising the errors in it."""

    def __init__(self, *scripts: Script) -> None:
        super().__init__()
        self.scripts = list(scripts)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        for item in self.scripts.pop(0):
            if isinstance(item, ModelError):
                raise item
            yield item


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class UpperBound(random.Random):
    """A "random" source that always picks the top of the range, to see the ceilings."""

    def uniform(self, a: float, b: float) -> float:
        return b


def done(text: str) -> StreamDone:
    return StreamDone(response=reply(text))


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


# RetryingModel ---------------------------------------------------------------------------


async def test_retries_retryable_errors_with_jittered_backoff() -> None:
    inner = Stub(RateLimited("slow down"), ProviderUnavailable("502"), reply("ok"))
    sleeps = Sleeps()
    model = RetryingModel(inner, attempts=3, sleep=sleeps, rng=random.Random(7))

    assert await model.complete(REQUEST) == reply("ok")

    same = random.Random(7)
    assert sleeps.delays == [same.uniform(0, 0.5), same.uniform(0, 1.0)]
    assert inner.calls == 3


async def test_backoff_doubles_up_to_max_delay() -> None:
    model = RetryingModel(Stub(), base_delay=0.5, max_delay=3.0, rng=UpperBound())

    assert [model.delay(n) for n in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert 0 <= RetryingModel(Stub(), rng=random.Random(1)).delay(3) <= 4.0


async def test_gives_up_after_attempts_with_the_last_error() -> None:
    last = ModelTimeout("third")
    inner = Stub(ModelTimeout("first"), ModelTimeout("second"), last, reply("never"))
    sleeps = Sleeps()

    with pytest.raises(ModelTimeout) as caught:
        await RetryingModel(inner, attempts=3, sleep=sleeps).complete(REQUEST)

    assert caught.value is last
    assert (inner.calls, len(sleeps.delays)) == (3, 2)


@pytest.mark.parametrize(
    "error",
    [InvalidModelRequest("bad"), ContextTooLong("long"), AuthenticationFailed("key"), ModelError()],
)
async def test_does_not_retry_errors_that_are_not_retryable(error: ModelError) -> None:
    inner = Stub(error, reply("never"))
    sleeps = Sleeps()

    with pytest.raises(ModelError) as caught:
        await RetryingModel(inner, sleep=sleeps).complete(REQUEST)

    assert caught.value is error
    assert (inner.calls, sleeps.delays) == (1, [])


def test_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryingModel(Stub(), attempts=0)


async def test_stream_retries_while_nothing_was_yielded() -> None:
    inner = StreamStub([RateLimited("429")], [TextDelta(text="hi"), done("hi")])
    sleeps = Sleeps()

    events = await collect(RetryingModel(inner, sleep=sleeps).stream(REQUEST))

    assert events == [TextDelta(text="hi"), done("hi")]
    assert (inner.calls, len(sleeps.delays)) == (2, 1)


async def test_stream_does_not_retry_after_a_delta() -> None:
    inner = StreamStub([TextDelta(text="hel"), ProviderUnavailable("reset")], [done("again")])
    seen: list[StreamEvent] = []

    with pytest.raises(ProviderUnavailable):
        async for event in RetryingModel(inner, sleep=Sleeps()).stream(REQUEST):
            seen.append(event)

    assert seen == [TextDelta(text="hel")]
    assert inner.calls == 1


async def test_stream_of_a_model_that_cannot_stream_is_one_stream_done() -> None:
    assert await collect(stream_reply(Stub(reply("whole")), REQUEST)) == [done("whole")]
    model = RetryingModel(Stub(ModelTimeout("t"), reply("whole")), sleep=Sleeps())
    assert await collect(model.stream(REQUEST)) == [done("whole")]


# FallbackModel ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        RateLimited("429"),
        ProviderUnavailable("500"),
        ModelTimeout("slow"),
        AuthenticationFailed("401"),
        ContextTooLong("too long for the small model"),
    ],
)
async def test_falls_back_after_errors_another_model_may_not_have(error: ModelError) -> None:
    first, second = Stub(error), Stub(reply("from second"))

    assert await FallbackModel([first, second]).complete(REQUEST) == reply("from second")
    assert falls_back(error)


@pytest.mark.parametrize("error", [InvalidModelRequest("bad schema"), ModelError("script")])
async def test_does_not_fall_back_after_a_request_every_model_would_refuse(
    error: ModelError,
) -> None:
    first, second = Stub(error), Stub(reply("never"))

    with pytest.raises(ModelError) as caught:
        await FallbackModel([first, second]).complete(REQUEST)

    assert caught.value is error
    assert second.calls == 0
    assert not falls_back(error)


async def test_raises_the_last_error_when_every_model_fails() -> None:
    last = ProviderUnavailable("third down")
    models = [Stub(RateLimited("a")), Stub(ModelTimeout("b")), Stub(last)]

    with pytest.raises(ProviderUnavailable) as caught:
        await FallbackModel(models).complete(REQUEST)

    assert caught.value is last
    assert [model.calls for model in models] == [1, 1, 1]


def test_fallback_needs_a_model() -> None:
    with pytest.raises(ValueError, match="at least one"):
        FallbackModel([])


async def test_stream_falls_back_before_the_first_delta() -> None:
    first = StreamStub([ProviderUnavailable("down")])
    second = StreamStub([TextDelta(text="b"), done("b")])

    events = await collect(FallbackModel([first, second]).stream(REQUEST))

    assert events == [TextDelta(text="b"), done("b")]


async def test_stream_does_not_fall_back_after_a_delta() -> None:
    first = StreamStub([TextDelta(text="a"), ProviderUnavailable("reset")])
    second = StreamStub([done("b")])

    with pytest.raises(ProviderUnavailable):
        await collect(FallbackModel([first, second]).stream(REQUEST))

    assert second.calls == 0


async def test_retrying_models_inside_a_fallback() -> None:
    sleeps = Sleeps()
    first = Stub(RateLimited("1"), RateLimited("2"))
    second = Stub(ProviderUnavailable("blip"), reply("ok"))
    group = FallbackModel(
        [
            RetryingModel(first, attempts=2, sleep=sleeps, rng=random.Random(0)),
            RetryingModel(second, attempts=2, sleep=sleeps, rng=random.Random(0)),
        ]
    )

    assert await group.complete(REQUEST) == reply("ok")
    assert (first.calls, second.calls, len(sleeps.delays)) == (2, 2, 2)
