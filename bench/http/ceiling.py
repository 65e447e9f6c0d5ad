"""The ceiling: a bare FastAPI endpoint doing the chat API's JSON round trip, nothing else.

Same route, same request body (validated the same way: a typed body, unknown fields
refused) and an answer of the same shape as `POST /v1/conversations/{id}/messages`, but no
auth, no store, no engine. Served by uvicorn exactly like `keel run` serves Keel, so the
difference between the two is what Keel does per turn.

    python -m uvicorn ceiling:app --app-dir bench/http --workers 3
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Body, FastAPI
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, with_config

# pydantic needs typing_extensions.TypedDict on Python < 3.12 (as keel/server/wire.py).
from typing_extensions import NotRequired, TypedDict  # noqa: UP035


@with_config(ConfigDict(extra="forbid"))
class MessageRequest(TypedDict):
    """One user message (the chat API's request body)."""

    text: Annotated[str, Field(min_length=1, max_length=16_000)]
    metadata: NotRequired[dict[str, object]]


app = FastAPI(title="ceiling")


@app.post("/v1/conversations/{conversation_id}/messages")
async def message(conversation_id: str, body: Annotated[MessageRequest, Body()]) -> JSONResponse:
    """Answer like Keel does for a turn whose model said "ok"."""
    return JSONResponse(
        {
            "conversation_id": conversation_id,
            "messages": [{"seq": 1, "text": "ok", "buttons": [], "utter_action": None}],
            "stop_reason": "end_turn",
            "state": "idle",
            "pending_confirmation": None,
            "last_seq": len(body["text"]),
        }
    )


@app.get("/health")
async def health() -> JSONResponse:
    """Readiness, like Keel's."""
    return JSONResponse({"status": "ok", "agent": "ceiling"})
