"""Admin endpoints (scope `admin`): every conversation of every key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from keel.server.deps import AdminKey, Runtime
from keel.server.errors import ERROR_RESPONSES
from keel.server.owners import split_key
from keel.server.wire import AdminConversation, AdminConversationsReply

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=ERROR_RESPONSES)


@router.get("/conversations", response_model=AdminConversationsReply)
async def list_conversations(
    principal: AdminKey,
    runtime: Runtime,
    owner: Annotated[str | None, Query(description="Only this key's conversations.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
) -> JSONResponse:
    """Conversations, most recently active first, with the key that owns each."""
    listed: list[AdminConversation] = []
    for summary in await runtime.store.list_conversations():
        key_name, conversation_id = split_key(summary.conversation_id)
        if owner is not None and key_name != owner:
            continue
        listed.append(
            {
                "owner": key_name,
                "conversation_id": conversation_id,
                "last_seq": summary.last_seq,
                "updated_at": summary.updated_at,
            }
        )
        if len(listed) >= limit:
            break
    reply: AdminConversationsReply = {"conversations": listed}
    return JSONResponse(reply)
