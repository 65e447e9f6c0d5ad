"""OpenAI's Responses API: `POST /v1/responses`, so the Agents SDK's default model works.

The conversation is the first of: `conversation` (an id string or `{id}`), the
conversation of `previous_response_id`, the `X-Keel-Conversation-Id` header, `user`; with
none of them a new conversation starts. Its id is in the answer's `conversation.id`, the
`X-Keel-Conversation-Id` header and, encoded, every response id (so `previous_response_id`
continues it with nothing stored). The input is the last user message of `input`. The
output is one assistant message holding the turn's bot messages joined by blank lines,
buttons written in as numbered choices (`keel.server.choices`). With `stream: true` the
answer is the Responses event stream: `response.created`, `response.in_progress`, the
message's `output_item.added` and `content_part.added`, one `response.output_text.delta`
per bot message, the `done` events and `response.completed` (`response.failed` when the
turn fails).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Body, Header
from fastapi.responses import JSONResponse, Response

from keel.events.model import BotMessage, ModelCalled
from keel.server.channels_openai import (
    checked_text,
    conversation_id,
    shown_texts,
    start_chosen,
)
from keel.server.deps import ChatKey, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.feed import Finished, Logged, RunOutcome
from keel.server.owners import store_key
from keel.server.responses_wire import (
    InputItem,
    OutputMessage,
    ResponseOut,
    ResponseRequest,
    ResponseUsage,
)
from keel.server.runs import TurnRun
from keel.server.turns import finish, stream_run
from keel.server.wire import ButtonOut

router = APIRouter(prefix="/v1", tags=["openai"], responses=ERROR_RESPONSES)

_PREFIX = "resp_"


def response_id(cid: str, unique: str) -> str:
    """A response id naming conversation `cid`."""
    return f"{_PREFIX}{cid.encode('utf-8').hex()}_{unique}"


def conversation_of(previous: str) -> str:
    """The conversation id a response id names (400 for an id Keel did not make)."""
    body, sep, _ = previous.removeprefix(_PREFIX).partition("_")
    try:
        if not previous.startswith(_PREFIX) or not sep:
            raise ValueError(previous)
        return bytes.fromhex(body).decode("utf-8")
    except ValueError:
        raise ApiError(
            400,
            "previous_response.not_found",
            f"previous_response_id {previous[:80]!r} is not a response of this server",
        ) from None


def _named(body: ResponseRequest) -> tuple[str | None, str | None]:
    """(conversation, conversation of previous_response_id) named by the request."""
    conversation = body.get("conversation")
    named = conversation.get("id") if isinstance(conversation, dict) else conversation
    previous = body.get("previous_response_id")
    if named and previous:
        raise ApiError(
            400, "request.invalid", "send conversation or previous_response_id, not both"
        )
    return named or None, conversation_of(previous) if previous else None


def _part_text(content: object) -> str | None:
    if isinstance(content, str) or content is None:
        return content
    texts = [
        p.get("text", "")
        for p in content  # type: ignore[attr-defined]
        if isinstance(p, dict) and p.get("type") in ("input_text", "text")
    ]
    return "\n".join(texts)


def _user_text(items: str | list[InputItem]) -> str:
    if isinstance(items, str):
        return checked_text(items, "input")
    for item in reversed(items):
        if item.get("role") == "user" and item.get("type", "message") == "message":
            return checked_text(_part_text(item.get("content")), "the last user message")
    return checked_text(None, "the last user message of input")


@router.post("/responses", response_model=ResponseOut)
async def create_response(
    body: Annotated[ResponseRequest, Body()],
    principal: ChatKey,
    runtime: Runtime,
    x_keel_conversation_id: Annotated[str | None, Header()] = None,
    x_keel_choices: Annotated[str | None, Header()] = None,
) -> Response:
    """Run one turn for the last user message of `input`, answered as a `response`."""
    text = _user_text(body["input"])
    named, previous = _named(body)
    cid = conversation_id(runtime, named, previous, x_keel_conversation_id, body.get("user"))
    run = await start_chosen(runtime, store_key(principal.name, cid), text)
    started = _Started(
        rid=response_id(cid, runtime.ids.new_id()),
        mid=f"msg_{runtime.ids.new_id()}",
        created=int(runtime.clock.now().timestamp()),
        model=runtime.agent_id,
        cid=cid,
        previous=body.get("previous_response_id"),
    )
    headers = {"X-Keel-Conversation-Id": cid}
    if body.get("stream"):
        response = stream_run(run, _stream(run, started, x_keel_choices))
        response.headers.update(headers)
        return response
    outcome = await finish(run)
    return JSONResponse(_completed(started, outcome, x_keel_choices), headers=headers)


@dataclass(frozen=True, kw_only=True, slots=True)
class _Started:
    """What a response is known by before its turn ends."""

    rid: str
    mid: str
    created: int
    model: str
    cid: str
    previous: str | None

    def shell(self, status: str) -> ResponseOut:
        """The response object with no output yet."""
        return {
            "id": self.rid,
            "object": "response",
            "created_at": self.created,
            "completed_at": None,
            "status": status,  # type: ignore[typeddict-item]
            "model": self.model,
            "output": [],
            "conversation": {"id": self.cid},
            "previous_response_id": self.previous,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "temperature": None,
            "top_p": None,
            "text": {"format": {"type": "text"}},
            "truncation": "disabled",
            "usage": None,
        }

    def message(self, text: str, status: str) -> OutputMessage:
        """The assistant message item."""
        return {
            "type": "message",
            "id": self.mid,
            "status": status,  # type: ignore[typeddict-item]
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
        }


def _usage(outcome: RunOutcome) -> ResponseUsage:
    calls = [s.event for s in outcome.events if isinstance(s.event, ModelCalled)]
    prompt = sum(c.input_tokens for c in calls)
    completion = sum(c.output_tokens for c in calls)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": sum(c.cached_input_tokens for c in calls)},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def _completed(started: _Started, outcome: RunOutcome, choices: str | None) -> ResponseOut:
    messages = [s.event for s in outcome.events if isinstance(s.event, BotMessage)]
    buttons: list[ButtonOut] = [
        {"title": b.title, "payload": b.payload} for m in messages for b in m.buttons
    ]
    reply = started.shell("completed")
    reply["completed_at"] = started.created
    reply["output"] = [started.message("\n\n".join(shown_texts(messages, choices)), "completed")]
    reply["usage"] = _usage(outcome)
    reply["keel"] = {
        "conversation_id": started.cid,
        "stop_reason": outcome.stop_reason,
        "state": outcome.state.status,
        "buttons": buttons,
    }
    return reply


def _event(kind: str, number: int, payload: dict[str, object]) -> str:
    data = {"type": kind, "sequence_number": number, **payload}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {text}\n\n"


async def _stream(run: TurnRun, started: _Started, choices: str | None) -> AsyncIterator[str]:
    where = {"item_id": started.mid, "output_index": 0, "content_index": 0}
    empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    number = 0

    def event(kind: str, payload: dict[str, object]) -> str:
        nonlocal number
        number += 1
        return _event(kind, number - 1, payload)

    yield event("response.created", {"response": started.shell("in_progress")})
    yield event("response.in_progress", {"response": started.shell("in_progress")})
    item = started.message("", "in_progress")
    item["content"] = []
    yield event("response.output_item.added", {"output_index": 0, "item": item})
    yield event("response.content_part.added", {**where, "part": empty})
    texts: list[str] = []
    shown = 0  # buttons numbered so far: numbers continue across the turn's messages
    async for fed in run.feed.follow():
        if isinstance(fed, Logged) and isinstance(fed.event, BotMessage):
            text = shown_texts([fed.event], choices, first=shown + 1)[0]
            shown += len(fed.event.buttons)
            delta = ("\n\n" if texts else "") + text
            texts.append(text)
            yield event("response.output_text.delta", {**where, "delta": delta, "logprobs": []})
        elif isinstance(fed, Finished):
            failure = fed.outcome.failure
            if failure is not None:
                failed = started.shell("failed")
                failed["error"] = {"code": failure.code, "message": failure.message}
                yield event("response.failed", {"response": failed})
                return
            whole = "\n\n".join(texts)
            part = {**empty, "text": whole}
            yield event("response.output_text.done", {**where, "text": whole, "logprobs": []})
            yield event("response.content_part.done", {**where, "part": part})
            done = started.message(whole, "completed")
            yield event("response.output_item.done", {"output_index": 0, "item": done})
            yield event(
                "response.completed", {"response": _completed(started, fed.outcome, choices)}
            )
