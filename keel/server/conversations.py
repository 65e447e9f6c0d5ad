"""The chat API: `/v1/conversations/{id}/...` (messages, state, events, stream, approvals, cancel).

Every route addresses the caller's own conversation (`keel.server.owners`). Messages and
approvals answer JSON, or a stream of server-sent events when the request accepts
`text/event-stream` (frames in `keel.server.sse`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Request
from fastapi.responses import Response

from keel.events.fold import ConversationState, fold
from keel.loop.stack import withdrawal_reason
from keel.server.deps import ChatKey, ConversationIdPath, Runtime, runtime_of
from keel.server.engine_port import resolve_call
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.json_reply import JsonReply
from keel.server.owners import store_key
from keel.server.runs import TurnRun
from keel.server.runtime import ServerRuntime
from keel.server.sse import encode_done, encode_item, encode_logged, render
from keel.server.sse_response import SSE_MEDIA_TYPE, EventStream
from keel.server.turns import finish, start_message, start_run, stream_run, wants_stream
from keel.server.views import conversation_view, events_reply, message_reply
from keel.server.wire import (
    ApprovalRequest,
    CancelReply,
    ConversationView,
    ErrorReply,
    EventsReply,
    MessageReply,
    MessageRequest,
)
from keel.stores.port import StoredEvent

router = APIRouter(prefix="/v1/conversations", tags=["conversations"], responses=ERROR_RESPONSES)

MAX_SEQ = 2**62
"""Larger sequence numbers are clamped (they do not fit a database integer)."""

_STREAMABLE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON, or server-sent events when `Accept: text/event-stream`.",
        "content": {SSE_MEDIA_TYPE: {"schema": {"type": "string"}}},
    },
    409: {"model": ErrorReply, "description": "A turn is running, or nothing is pending."},
}
_UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorReply, "description": "No such conversation for this key."},
}


async def known_last_seq(runtime: ServerRuntime, key: str) -> int:
    """The log's last seq; 404 when it has no events and no turn is running."""
    last = await runtime.store.last_seq(key)
    if last == 0 and runtime.runs.active(key) is None:
        raise ApiError(404, "conversation.not_found", "no such conversation")
    return last


async def _log(runtime: ServerRuntime, key: str) -> list[StoredEvent]:
    """The whole log; 404 when the conversation has none and no turn is running."""
    stored = await runtime.store.read(key)
    if not stored and runtime.runs.active(key) is None:
        raise ApiError(404, "conversation.not_found", "no such conversation")
    return stored


@router.post("/{conversation_id}/messages", response_model=MessageReply, responses=_STREAMABLE)
async def post_message(
    conversation_id: ConversationIdPath,
    body: Annotated[MessageRequest, Body()],
    principal: ChatKey,
    request: Request,
) -> Response:
    """Send a user message; the conversation is created by its first message."""
    key = store_key(principal.name, conversation_id)
    run = start_message(runtime_of(request), key, body["text"], body.get("metadata"))
    if wants_stream(request):
        return stream_run(run)
    return JsonReply(message_reply(conversation_id, await finish(run)))


@router.get("/{conversation_id}", response_model=ConversationView, responses=_UNKNOWN)
async def get_conversation(
    conversation_id: ConversationIdPath, principal: ChatKey, runtime: Runtime
) -> JsonReply:
    """The conversation's state: status, active skill, stack, memory (pii masked), pause."""
    key = store_key(principal.name, conversation_id)
    state = fold(s.event for s in await _log(runtime, key))
    running = runtime.runs.active(key) is not None
    view = conversation_view(conversation_id, state, runtime.definition.memory, running=running)
    return JsonReply(view)


@router.get("/{conversation_id}/events", response_model=EventsReply, responses=_UNKNOWN)
async def get_events(
    conversation_id: ConversationIdPath,
    principal: ChatKey,
    runtime: Runtime,
    after: Annotated[
        int, Query(ge=0, le=MAX_SEQ, description="Only events with a larger seq.")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1_000,
) -> JsonReply:
    """The conversation's log after seq `after`, as encoded events (at most `limit`), pii
    memory masked as in the state view."""
    key = store_key(principal.name, conversation_id)
    last = await known_last_seq(runtime, key)
    events = (await runtime.store.read(key, after_seq=after))[:limit]
    masked = runtime.definition.memory
    return JsonReply(events_reply(conversation_id, events, last, masked=masked))


@router.get(
    "/{conversation_id}/stream",
    responses={
        200: {
            "description": "Server-sent events: the log after the resume point, then `done`.",
            "content": {SSE_MEDIA_TYPE: {"schema": {"type": "string"}}},
        },
        **_UNKNOWN,
    },
)
async def get_stream(
    conversation_id: ConversationIdPath,
    principal: ChatKey,
    runtime: Runtime,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventStream:
    """Replay the log after `Last-Event-ID` (or `after`), then follow a running turn."""
    key = store_key(principal.name, conversation_id)
    start = resume_point(last_event_id, after)
    stored = await _log(runtime, key)
    run = runtime.runs.active(key)
    return EventStream(_replay(stored, start, run))


def resume_point(last_event_id: str | None, after: int | None) -> int:
    """The seq to resume after: `Last-Event-ID` when sent (422 when not a number), else
    `after`, else 0."""
    if last_event_id is not None and last_event_id.strip():
        try:
            return min(MAX_SEQ, max(0, int(last_event_id.strip())))
        except ValueError:
            raise ApiError(422, "request.invalid", "Last-Event-ID must be a number") from None
    return after or 0


async def _replay(stored: list[StoredEvent], start: int, run: TurnRun | None) -> AsyncIterator[str]:
    last = start
    for item in stored:
        if item.seq > start:
            frame = encode_logged(item.seq, item.event)
            last = item.seq
            if frame is not None:
                yield render(frame)
    if run is None:
        state: ConversationState = fold(s.event for s in stored)
        # The log's own last seq, even when the resume point lies past it.
        logged = stored[-1].seq if stored else 0
        yield render(encode_done(None, state=state.status, last_seq=logged))
        return
    async for feed_item in run.feed.follow(run.feed.position_after(last)):
        for frame in encode_item(feed_item):
            if frame.id is None or frame.id > last or frame.event == "done":
                yield render(frame)


@router.post(
    "/{conversation_id}/approvals/{pause_id}",
    response_model=MessageReply,
    responses={**_STREAMABLE, **_UNKNOWN},
)
async def post_approval(
    conversation_id: ConversationIdPath,
    pause_id: str,
    body: Annotated[ApprovalRequest, Body()],
    principal: ChatKey,
    runtime: Runtime,
    request: Request,
) -> Response:
    """Approve or deny a pending pause point; it resumes exactly once (409 otherwise)."""
    key = store_key(principal.name, conversation_id)
    events = [s.event for s in await _log(runtime, key)]
    pending = fold(events).pending_confirmation
    if pending is None or pending.pause_id != pause_id:
        reason = withdrawal_reason(events, pause_id)
        if reason is not None:
            message = f"pause {pause_id!r} was withdrawn ({reason})"
            raise ApiError(409, "approval.pause_withdrawn", message)
        raise ApiError(409, "approval.not_pending", f"pause {pause_id!r} is not pending")
    call = resolve_call(runtime.engine, key, pause_id, body["approved"])
    run = start_run(runtime, key, call)
    if wants_stream(request):
        return stream_run(run)
    return JsonReply(message_reply(conversation_id, await finish(run)))


@router.post("/{conversation_id}/cancel", response_model=CancelReply, responses=_UNKNOWN)
async def post_cancel(
    conversation_id: ConversationIdPath, principal: ChatKey, runtime: Runtime
) -> JsonReply:
    """Cancel the turn running in this process; it is recorded as cancelled."""
    key = store_key(principal.name, conversation_id)
    run = runtime.runs.active(key)
    if run is None:
        if await runtime.store.last_seq(key) == 0:
            raise ApiError(404, "conversation.not_found", "no such conversation")
        raise ApiError(409, "conversation.not_running", "no turn is running in this process")
    run.cancel()
    outcome = await run.wait()
    reply: CancelReply = {
        "conversation_id": conversation_id,
        "cancelled": outcome.cancelled,
        "stop_reason": outcome.stop_reason,  # type: ignore[typeddict-item]
        "state": outcome.state.status,
    }
    return JsonReply(reply)
