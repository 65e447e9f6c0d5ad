"""Admin read endpoints for the Inspector (scope `admin`): any key's conversation.

A conversation is addressed by its owner (the key name, as in `GET /v1/admin/conversations`)
and the id that key chose; the owner `~` addresses a log written outside the server (owner
null in the listing). `events` answers the log like the chat API's, `state?seq=N` the fold
of the log up to event N (memory pii masked), `graph?seq=N` the agent's Mermaid flowchart
(`keel graph`) with the step the conversation was at after event N marked, and `stream`
every log event as a `logged` frame: the log after the resume point, then new events as
they are appended, until the client leaves.

The stream follows the log, the source of truth: each round reads the store after the last
seq sent, then waits for a reason to look again. Reasons: the conversation's running turn
pushed to its feed (events of this process's turns arrive at once), a run started in this
process (its next turn), or `POLL_SECONDS` passed (turns run by other worker processes).
When nothing was sent for `KEEP_ALIVE_SECONDS` a comment is sent so proxies keep the
connection. The generator never ends by itself: `EventStream` closes it when the client
leaves.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query
from fastapi.responses import JSONResponse

# pydantic needs typing_extensions' TypedDict before Python 3.12 (as keel.server.wire).
from typing_extensions import TypedDict

from keel.events.fold import ConversationState, fold
from keel.project.definition import AgentDefinition
from keel.project.graph import highlight_node, mermaid_graph
from keel.server.conversations import MAX_SEQ, known_last_seq, resume_point
from keel.server.deps import AdminKey, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.owners import store_key
from keel.server.runtime import ServerRuntime
from keel.server.sse import KEEP_ALIVE, encode_log_entry, render
from keel.server.sse_response import SSE_MEDIA_TYPE, EventStream
from keel.server.views import events_reply, state_at_reply
from keel.server.wire import ErrorReply, EventsReply, StateAtReply

router = APIRouter(
    prefix="/v1/admin/conversations/{owner}/{conversation_id}",
    tags=["admin"],
    responses=ERROR_RESPONSES,
)

NO_OWNER = "~"
"""The owner path segment of a log written outside the server (no key name in its id)."""

OwnerPath = Annotated[
    str,
    Path(
        pattern=r"^(~|[A-Za-z0-9_.-]{1,64})$",
        description="The key name that owns the conversation, or `~` for none.",
    ),
]
AdminConversationIdPath = Annotated[
    str, Path(min_length=1, max_length=255, description="The conversation id its key chose.")
]
_SEQ_OUT_OF_RANGE = (
    "`seq` is not a number, or past the log's end (`conversation.seq_out_of_range`)."
)
SeqQuery = Annotated[int, Query(ge=0, le=MAX_SEQ)]

_UNKNOWN: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorReply, "description": "No such conversation (`conversation.not_found`)."},
}

_AT_SEQ: dict[int | str, dict[str, Any]] = {
    **_UNKNOWN,
    422: {"model": ErrorReply, "description": _SEQ_OUT_OF_RANGE},
}


def inspected_key(owner: str, conversation_id: str) -> str:
    """The store's id of `owner`'s conversation `conversation_id`."""
    return conversation_id if owner == NO_OWNER else store_key(owner, conversation_id)


async def folded_at(
    runtime: ServerRuntime, key: str, seq: int | None
) -> tuple[ConversationState, int, int]:
    """(the log of `key` folded up to `seq` (default: its end), that seq, the last seq);
    404 for no such conversation, 422 `conversation.seq_out_of_range` past the log's end."""
    last = await known_last_seq(runtime, key)
    upto = last if seq is None else seq
    if upto > last:
        raise ApiError(
            422,
            "conversation.seq_out_of_range",
            f"seq {upto} is past the log's last event ({last})",
        )
    stored = await runtime.store.read(key)
    return fold(s.event for s in stored if s.seq <= upto), upto, last


@router.get("/events", response_model=EventsReply, responses=_UNKNOWN)
async def get_events(
    owner: OwnerPath,
    conversation_id: AdminConversationIdPath,
    principal: AdminKey,
    runtime: Runtime,
    after: Annotated[
        int, Query(ge=0, le=MAX_SEQ, description="Only events with a larger seq.")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1_000,
) -> JSONResponse:
    """The conversation's log after seq `after`, as encoded events (at most `limit`)."""
    key = inspected_key(owner, conversation_id)
    last = await known_last_seq(runtime, key)
    events = (await runtime.store.read(key, after_seq=after))[:limit]
    return JSONResponse(events_reply(conversation_id, events, last, masked=None, internals=True))


@router.get(
    "/state",
    response_model=StateAtReply,
    responses=_AT_SEQ,
)
async def get_state(
    owner: OwnerPath,
    conversation_id: AdminConversationIdPath,
    principal: AdminKey,
    runtime: Runtime,
    seq: Annotated[
        int | None,
        Query(ge=0, le=MAX_SEQ, description="Fold up to this event (default: the last)."),
    ] = None,
) -> JSONResponse:
    """The conversation's state after event `seq`: status, active skill, stack, memory
    (pii masked), pending pause."""
    state, upto, last = await folded_at(runtime, inspected_key(owner, conversation_id), seq)
    shown_owner = None if owner == NO_OWNER else owner
    reply = state_at_reply(
        shown_owner, conversation_id, state, runtime.definition.memory, seq=upto, last_seq=last
    )
    return JSONResponse(reply)


@router.get(
    "/stream",
    responses={
        200: {
            "description": "Server-sent events: a `logged` frame per log event after the "
            "resume point, then each new event as it is appended, until the client leaves.",
            "content": {SSE_MEDIA_TYPE: {"schema": {"type": "string"}}},
        },
        **_UNKNOWN,
    },
)
async def get_stream(
    owner: OwnerPath,
    conversation_id: AdminConversationIdPath,
    principal: AdminKey,
    runtime: Runtime,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventStream:
    """Follow the log: replay after `Last-Event-ID` (or `after`), then live."""
    key = inspected_key(owner, conversation_id)
    start = resume_point(last_event_id, after)
    await known_last_seq(runtime, key)
    return EventStream(follow_log(runtime, key, start))


class CurrentStepOut(TypedDict):
    """The step an ordered block of the conversation was at, and its node in the graph."""

    skill_id: str
    block_id: str
    step_id: str
    node_id: str
    """The Mermaid node id of the step (`keel.project.graph.step_node_id`)."""


class GraphReply(TypedDict):
    """`GET /v1/admin/conversations/{owner}/{id}/graph`: the agent's flowchart at `seq`."""

    owner: str | None
    conversation_id: str
    seq: int
    """The last event folded (the `seq` asked for, else the log's last)."""
    mermaid: str
    """The Mermaid text `keel graph` prints, the current step given the class `current`."""
    current: CurrentStepOut | None
    """The innermost ordered block's step after event `seq`; null outside any block."""


def current_step(definition: AgentDefinition, state: ConversationState) -> CurrentStepOut | None:
    """The step pointer of the innermost ordered block on `state`'s stack that the graph
    shows (a step of a bundled skill, or one the definition no longer has, is none)."""
    for frame in reversed(state.stack):
        if frame.block_id is None or frame.step_id is None:
            continue
        node = highlight_node(definition, f"{frame.skill_id}.{frame.block_id}.{frame.step_id}")
        skill = definition.skills.get(frame.skill_id)
        if node is None or skill is None or skill.bundled:
            return None
        return {
            "skill_id": frame.skill_id,
            "block_id": frame.block_id,
            "step_id": frame.step_id,
            "node_id": node,
        }
    return None


def graph_reply(
    owner: str | None,
    conversation_id: str,
    definition: AgentDefinition,
    state: ConversationState,
    *,
    seq: int,
) -> GraphReply:
    """The graph of `definition` with the current step of `state` (the log up to `seq`)."""
    current = current_step(definition, state)
    highlight = (
        None
        if current is None
        else f"{current['skill_id']}.{current['block_id']}.{current['step_id']}"
    )
    return {
        "owner": owner,
        "conversation_id": conversation_id,
        "seq": seq,
        "mermaid": mermaid_graph(definition, highlight=highlight),
        "current": current,
    }


@router.get(
    "/graph",
    response_model=GraphReply,
    responses=_AT_SEQ,
)
async def get_graph(
    owner: OwnerPath,
    conversation_id: AdminConversationIdPath,
    principal: AdminKey,
    runtime: Runtime,
    seq: Annotated[
        int | None,
        Query(ge=0, le=MAX_SEQ, description="The step after this event (default: the last)."),
    ] = None,
) -> JSONResponse:
    """The agent's skills, blocks and steps as a Mermaid flowchart (`keel graph`), the step
    the conversation was at after event `seq` marked as `current`."""
    state, upto, _ = await folded_at(runtime, inspected_key(owner, conversation_id), seq)
    shown_owner = None if owner == NO_OWNER else owner
    return JSONResponse(
        graph_reply(shown_owner, conversation_id, runtime.definition, state, seq=upto)
    )


# Following the log (the `stream` endpoint).

POLL_SECONDS = 1.0
"""How often the store is read when nothing in this process signals a change."""

KEEP_ALIVE_SECONDS = 15.0
"""Quiet time after which a keep-alive comment is sent."""


async def follow_log(runtime: ServerRuntime, key: str, after: int) -> AsyncIterator[str]:
    """SSE text: every event of conversation `key` after seq `after`, then new ones."""
    loop = asyncio.get_running_loop()
    last, last_write = after, loop.time()
    while True:
        # Take the wake-up signals before reading, so an append in between is not missed.
        signals = [runtime.runs.next_start()]
        run = runtime.runs.active(key)
        if run is not None and not run.feed.finished:
            signals.append(run.feed.next_push())
        for stored in await runtime.store.read(key, after_seq=last):
            yield render(encode_log_entry(stored.seq, stored.event))
            last, last_write = stored.seq, loop.time()
        if loop.time() - last_write >= KEEP_ALIVE_SECONDS:
            yield KEEP_ALIVE
            last_write = loop.time()
        await first_set(signals, timeout=POLL_SECONDS)


async def first_set(events: list[asyncio.Event], *, timeout: float) -> None:
    """Return when one of `events` is set, or after `timeout` seconds."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
