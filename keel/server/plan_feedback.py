"""`POST /v1/conversations/{id}/turns/{turn_id}/feedback`: the user's verdict on a turn's plan.

`approve`, `reject` or `repeat` (spec §3.12) reach the plan cache of the skill whose plan
the turn ran or recorded: approvals promote, rejections demote and delete the serving
entry, `repeat` keeps that plan shape away for an hour. The decision is also appended to
the conversation as `plan_cache_decided` (`layer: feedback`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict

from keel.loop.errors import PlanFeedbackRefused
from keel.server.conversations import known_last_seq
from keel.server.deps import ChatKey, ConversationIdPath, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.owners import store_key
from keel.server.wire import ErrorReply

router = APIRouter(prefix="/v1/conversations", tags=["conversations"], responses=ERROR_RESPONSES)


@with_config(ConfigDict(extra="forbid"))
class FeedbackRequest(TypedDict):
    """The verdict on a turn."""

    signal: Literal["approve", "reject", "repeat"]


class FeedbackReply(TypedDict):
    """What the plan cache changed (`changed` is a comma-separated list of codes)."""

    conversation_id: str
    turn_id: str
    signal: str
    changed: str


@router.post(
    "/{conversation_id}/turns/{turn_id}/feedback",
    response_model=FeedbackReply,
    responses={
        404: {"model": ErrorReply, "description": "No such conversation for this key."},
        409: {"model": ErrorReply, "description": "No plan ran in that turn, or no cache."},
    },
)
async def post_feedback(
    conversation_id: ConversationIdPath,
    turn_id: Annotated[str, Field(min_length=1, max_length=255)],
    body: Annotated[FeedbackRequest, Body()],
    principal: ChatKey,
    runtime: Runtime,
) -> JSONResponse:
    """Tell the plan cache how a turn went."""
    key = store_key(principal.name, conversation_id)
    await known_last_seq(runtime, key)
    try:
        changed = await runtime.engine.feedback(key, turn_id, body["signal"])
    except PlanFeedbackRefused as exc:
        raise ApiError(409, "plan.feedback_refused", exc.reason) from exc
    reply: FeedbackReply = {
        "conversation_id": conversation_id,
        "turn_id": turn_id,
        "signal": body["signal"],
        "changed": changed,
    }
    return JSONResponse(reply)
