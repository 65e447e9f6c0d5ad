"""OpenAI-compatible channel: `POST /v1/chat/completions` and `GET /v1/models`.

Any OpenAI client can talk to the agent: the model name is the agent id (any name is
accepted), the conversation id comes from the `X-Keel-Conversation-Id` header or the
`user` field (without either a new conversation starts, its id in the answer's header and
`keel.conversation_id`), and the input is the last `user` message (Keel keeps the history
itself). The assistant content is the turn's bot messages joined by blank lines, buttons
written in as numbered choices (`keel.server.choices`; `X-Keel-Choices: off` leaves them
out); with `stream: true` each bot message is one `chat.completion.chunk`, then
`data: [DONE]`. The helpers here are shared with the Responses API (`channels_responses`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Body, Header
from fastapi.responses import JSONResponse, Response

from keel.events.base import JsonValue, utf8_encodable
from keel.events.model import BotMessage, ModelCalled
from keel.server.choices import choose, numbered_text
from keel.server.deps import ChatKey, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError, error_body
from keel.server.feed import Finished, Logged, RunOutcome
from keel.server.openai_wire import (
    ChatCompletionOut,
    ChatCompletionRequest,
    ChatMessageIn,
    ModelListOut,
)
from keel.server.owners import store_key
from keel.server.runs import TurnRun
from keel.server.runtime import ServerRuntime
from keel.server.turns import finish, start_message, stream_run
from keel.server.wire import CONVERSATION_ID_PATTERN, MAX_TEXT_CHARS, ButtonOut

router = APIRouter(prefix="/v1", tags=["openai"], responses=ERROR_RESPONSES)

_ID = re.compile(CONVERSATION_ID_PATTERN)
_FINISH = {"budget_exhausted": "length"}


CHOICES_HEADER = "X-Keel-Choices"
"""`X-Keel-Choices: off` leaves the numbered choices out of the text (for a client that
shows `keel.buttons` itself)."""


def conversation_id(runtime: ServerRuntime, *named: str | None) -> str:
    """The first id in `named` that is set (checked), else a new conversation's id."""
    chosen = next((n for n in named if n), None)
    if chosen is None:
        return f"conv_{runtime.ids.new_id()}"
    if not _ID.match(chosen):
        raise ApiError(422, "request.invalid", "conversation id: 1-128 of A-Z a-z 0-9 . _ : @ -")
    return chosen


def checked_text(content: str | None, what: str) -> str:
    """`content` stripped, or 422 when it is empty, too long or not UTF-8 text."""
    text = (content or "").strip()
    if not text or len(text) > MAX_TEXT_CHARS:
        raise ApiError(422, "request.invalid", f"{what} must hold 1-{MAX_TEXT_CHARS} characters")
    if not utf8_encodable(text):
        raise ApiError(422, "request.invalid", f"{what} is not valid UTF-8 text")
    return text


def _user_text(messages: list[ChatMessageIn]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") for p in content if p["type"] == "text")
            return checked_text(content, "the last user message")
    return checked_text(None, "the last user message")


async def start_chosen(runtime: ServerRuntime, key: str, text: str) -> TurnRun:
    """Start the turn for `text`, a bare number standing for a button of the last turn."""
    chosen = await choose(runtime.store, key, text)
    metadata: dict[str, JsonValue] | None = (
        {"button_title": chosen.button_title} if chosen.button_title is not None else None
    )
    return start_message(runtime, key, chosen.text, metadata)


def shown_texts(messages: list[BotMessage], choices: str | None, *, first: int = 1) -> list[str]:
    """The messages' texts as an OpenAI client shows them (buttons as numbered choices
    from `first` on, unless `X-Keel-Choices: off`)."""
    texts = [m.text for m in messages]
    if (choices or "").strip().lower() == "off":
        return texts
    return numbered_text(texts, [m.buttons for m in messages], first=first)


@router.post("/chat/completions", response_model=ChatCompletionOut)
async def chat_completions(
    body: Annotated[ChatCompletionRequest, Body()],
    principal: ChatKey,
    runtime: Runtime,
    x_keel_conversation_id: Annotated[str | None, Header()] = None,
    x_keel_choices: Annotated[str | None, Header()] = None,
) -> Response:
    """Run one turn for the last user message and answer in the Chat Completions shape
    (a new conversation when none is named: its id is in the header and `keel`)."""
    text = _user_text(body["messages"])
    cid = conversation_id(runtime, x_keel_conversation_id, body.get("user"))
    run = await start_chosen(runtime, store_key(principal.name, cid), text)
    completion_id = f"chatcmpl-{runtime.ids.new_id()}"
    created = int(runtime.clock.now().timestamp())
    headers = {"X-Keel-Conversation-Id": cid}
    if body.get("stream"):
        chunks = _stream(run, completion_id, created, runtime.agent_id, x_keel_choices)
        response = stream_run(run, chunks)
        response.headers.update(headers)
        return response
    outcome = await finish(run)
    reply = _completion(outcome, completion_id, created, runtime, cid, x_keel_choices)
    return JSONResponse(reply, headers=headers)


def _completion(
    outcome: RunOutcome,
    completion_id: str,
    created: int,
    runtime: ServerRuntime,
    cid: str,
    choices: str | None,
) -> ChatCompletionOut:
    messages = [s.event for s in outcome.events if isinstance(s.event, BotMessage)]
    calls = [s.event for s in outcome.events if isinstance(s.event, ModelCalled)]
    prompt = sum(c.input_tokens for c in calls)
    completion = sum(c.output_tokens for c in calls)
    buttons: list[ButtonOut] = [
        {"title": b.title, "payload": b.payload} for m in messages for b in m.buttons
    ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": runtime.agent_id,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "\n\n".join(shown_texts(messages, choices)),
                },
                "finish_reason": _FINISH.get(outcome.stop_reason, "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "keel": {
            "conversation_id": cid,
            "stop_reason": outcome.stop_reason,
            "state": outcome.state.status,
            "buttons": buttons,
        },
    }


def _data(payload: object) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n"


async def _stream(
    run: TurnRun, completion_id: str, created: int, model: str, choices: str | None
) -> AsyncIterator[str]:
    def chunk(delta: dict[str, str], finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return _data(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [choice],
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    separator = ""
    shown = 0  # buttons numbered so far: numbers continue across the turn's messages
    async for item in run.feed.follow():
        if isinstance(item, Logged) and isinstance(item.event, BotMessage):
            text = shown_texts([item.event], choices, first=shown + 1)[0]
            shown += len(item.event.buttons)
            yield chunk({"content": separator + text})
            separator = "\n\n"
        elif isinstance(item, Finished):
            failure = item.outcome.failure
            if failure is not None:
                yield _data(error_body(failure.status, failure.code, failure.message))
            else:
                yield chunk({}, _FINISH.get(item.outcome.stop_reason, "stop"))
    yield "data: [DONE]\n\n"


@router.get("/models", response_model=ModelListOut)
async def list_models(principal: ChatKey, runtime: Runtime) -> JSONResponse:
    """The served agent, as the one model."""
    reply: ModelListOut = {
        "object": "list",
        "data": [{"id": runtime.agent_id, "object": "model", "created": 0, "owned_by": "keel"}],
    }
    return JSONResponse(reply)
