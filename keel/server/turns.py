"""Starting runs for the channels, and answering with JSON or a stream of frames.

The busy policy lives here: a request that would run a turn for a conversation that
already has one running in this process is refused with 409 `conversation.busy`
(nothing is queued). Across worker processes the engine's use of the store's conversation
lock serialises turns instead: the second waits for the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import cast

from starlette.requests import Request

from keel.events.base import JsonValue
from keel.server.engine_port import TurnCall, handle_call
from keel.server.errors import ApiError
from keel.server.feed import RunOutcome
from keel.server.runs import ConversationBusy, TurnRun
from keel.server.runtime import ServerRuntime
from keel.server.sse import encode_item, render
from keel.server.sse_response import SSE_MEDIA_TYPE, EventStream


def wants_stream(request: Request) -> bool:
    """Whether the client asked for `text/event-stream`."""
    return SSE_MEDIA_TYPE in request.headers.get("accept", "")


def start_run(runtime: ServerRuntime, key: str, call: TurnCall) -> TurnRun:
    """Start `call` for conversation `key`, or refuse with 409 when one is running."""
    try:
        return runtime.runs.start(key, call)
    except ConversationBusy:
        raise ApiError(
            409,
            "conversation.busy",
            "a turn is already running for this conversation; retry when it ends "
            "(or cancel it with POST .../cancel)",
            headers={"Retry-After": "1"},
        ) from None


def start_message(
    runtime: ServerRuntime, key: str, text: str, metadata: Mapping[str, object] | None
) -> TurnRun:
    """Start the turn for one user message."""
    meta = cast(Mapping[str, JsonValue] | None, metadata)
    return start_run(runtime, key, handle_call(runtime.engine, key, text, meta))


async def finish(run: TurnRun) -> RunOutcome:
    """Wait for the run; a failed run becomes its error answer."""
    outcome = await run.wait()
    if outcome.failure is not None:
        failure = outcome.failure
        raise ApiError(failure.status, failure.code, failure.message)
    return outcome


async def run_frames(run: TurnRun, start: int = 0) -> AsyncIterator[str]:
    """The run's feed from index `start`, rendered as SSE text."""
    async for item in run.feed.follow(start):
        for frame in encode_item(item):
            yield render(frame)


def stream_run(run: TurnRun, chunks: AsyncIterator[str] | None = None) -> EventStream:
    """Stream a run; when the client leaves first, the turn is cancelled (style rule 17)."""

    def client_left() -> None:
        run.cancel()

    return EventStream(chunks if chunks is not None else run_frames(run), on_disconnect=client_left)
