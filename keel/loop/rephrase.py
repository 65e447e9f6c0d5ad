"""Rephrasing a named response in context (spec §9.1 `metadata.rephrase`, §2.6 guided collect).

A response rendered with `metadata.rephrase: true` (`keel.loop.deliver`: the variant asks
for it, or `endpoints.yml` says `nlg: {type: rephrase, rephrase_all: true}`) is rewritten
before it is sent, by one model call on the router tier with no tools offered (so never
`listen`). The call gets `REPHRASE_PROMPT` filled with the agent's persona, and the user's
last message with the response text, placeholders already filled. A collect step's
question is rephrased the same way (Mantle's guided collect rephrase; the call is marked
`purpose: collect_rephrase`).

The verbatim text is sent instead, with `metadata.rephrase_fallback: {code, message}`,
when the agent runs without a model (`rephrase.no_model`), a placeholder was filled from a
`pii` field (`rephrase.pii`: the value must not reach a model), the call fails
(`rephrase.failed`), takes longer than `agent.yml` `rephrase_timeout` seconds
(`rephrase.timeout`), or answers no text (`rephrase.empty`). A rephrased message has
`response_source: rephrased` and keeps the verbatim text in `metadata.verbatim_text`;
buttons are never changed. A finished call is recorded as `model_called` with
`metadata.purpose`; it is not a round trip of the tool-calling loop, so it does not count
against the turn's `max_turns` budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from keel.events.base import JsonValue, freeze_json
from keel.events.fold import ConversationState
from keel.events.model import BotMessage, Event, ModelCalled, UserMessage
from keel.ids import Clock
from keel.llm.errors import ModelConfigError, ModelError, ModelTimeout
from keel.llm.none import has_model
from keel.llm.port import (
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    system_message,
    user_message,
)
from keel.llm.tiers import group_id_for
from keel.llm.usage import spec_for
from keel.loop.control import said_by_user
from keel.loop.machine import frame_block
from keel.loop.model_record import model_called
from keel.loop.stack import top_block
from keel.project.definition import AgentDefinition
from keel.skills import CollectStep

REPHRASE_TIER = "router"
"""Rephrase calls are short rewrites: the cheap tier (which falls back to `default`)."""

REPHRASE_PROMPT = """\
You rewrite one message that a conversational assistant is about to send, so that it \
fits the conversation naturally.

## The assistant
{persona}

## Rules
- Keep the meaning and every fact exactly: numbers, dates, times, names, amounts, \
references and links stay as written.
- Add nothing: no new information, promise, question or offer; leave nothing out.
- Keep the language of the message and the assistant's voice; stay about as short.
- Reply with the rewritten message only: no quotes, no preamble, no explanation.{buttons}
"""
"""The system message of a rephrase call (`{persona}`, `{buttons}` are filled)."""

BUTTONS_RULE = "\n- The options are shown to the user as buttons: do not list them."
"""Added to the rules when the message has buttons."""

REPHRASE_REQUEST = """\
The user's last message:
{user}

The message to rewrite:
{text}"""
"""The user message of a rephrase call."""

NO_USER_MESSAGE = "(the user has not said anything yet)"


@dataclass(frozen=True, kw_only=True, slots=True)
class Rephrased:
    """What to send, and the `model_called` record of the call (None: no call finished)."""

    message: BotMessage
    called: ModelCalled | None = None


def wants_rephrase(message: BotMessage) -> bool:
    """Whether the rendered message asks to be rephrased (`metadata.rephrase: true`)."""
    return message.metadata.get("rephrase") is True


def last_user_text(events: Sequence[Event]) -> str | None:
    """What the user last said (a tap reads as its title; control messages are skipped)."""
    for event in reversed(events):
        if isinstance(event, UserMessage):
            said = said_by_user(event)
            if said is not None and said.strip():
                return said
    return None


def rephrase_request(
    definition: AgentDefinition, message: BotMessage, user: str | None
) -> ModelRequest:
    """The request of one rephrase call: no tools, on the router tier."""
    system = REPHRASE_PROMPT.format(
        persona=definition.config.persona.strip(),
        buttons=BUTTONS_RULE if message.buttons else "",
    )
    asked = REPHRASE_REQUEST.format(user=user or NO_USER_MESSAGE, text=message.text)
    messages: tuple[Message, ...] = (system_message(system), user_message(asked))
    return ModelRequest(messages=messages, tier=REPHRASE_TIER)


def purpose_of(definition: AgentDefinition, state: ConversationState, message: BotMessage) -> str:
    """`collect_rephrase` for the question of the collect step the pointer stands on,
    else `rephrase`."""
    frame = top_block(state)
    found = frame_block(definition, frame) if frame is not None else None
    if found is not None and frame is not None:
        step = found[1].step(frame.step_id or "")
        if isinstance(step, CollectStep) and step.utterance == message.utter_action:
            return "collect_rephrase"
    return "rephrase"


async def rephrase(
    message: BotMessage,
    *,
    definition: AgentDefinition,
    state: ConversationState,
    model: Model,
    clock: Clock,
    events: Sequence[Event],
) -> Rephrased:
    """`message` rewritten in context, or as it is with the reason in its metadata.

    `events` is the conversation so far (the user's last message is taken from it).
    Never raises for a failing model; a cancelled turn still cancels the call.
    """
    if message.metadata.get("rephrase_blocked") == "pii":
        return Rephrased(message=_fallback(message, "rephrase.pii", "a placeholder holds pii"))
    if not has_model(model):
        return Rephrased(message=_fallback(message, "rephrase.no_model", "no model configured"))
    request = rephrase_request(definition, message, last_user_text(events))
    timeout = definition.config.rephrase_timeout
    started = clock.now()
    try:
        async with asyncio.timeout(timeout):
            response = await model.complete(request)
    except (TimeoutError, ModelTimeout):
        reason = f"no answer within rephrase_timeout ({timeout:g} s)"
        return Rephrased(message=_fallback(message, "rephrase.timeout", reason))
    except (ModelError, ModelConfigError) as exc:
        reason = f"{exc.code}: {exc}"
        return Rephrased(message=_fallback(message, "rephrase.failed", reason))
    elapsed = (clock.now() - started).total_seconds() * 1000
    called = _called(definition, request, response, elapsed, purpose_of(definition, state, message))
    text = _cleaned(response.text or "")
    if not text:
        return Rephrased(
            message=_fallback(message, "rephrase.empty", "the model answered no text"),
            called=called,
        )
    meta = {**message.metadata, "verbatim_text": message.text}
    rephrased = replace(message, text=text, response_source="rephrased", metadata=meta)
    return Rephrased(message=rephrased, called=called)


def _cleaned(text: str) -> str:
    """The reply without surrounding whitespace or one pair of wrapping quotes."""
    text = text.strip()
    for left, right in _QUOTES:
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            return text[1:-1].strip()
    return text


_QUOTES = (('"', '"'), ("'", "'"), ("\u201c", "\u201d"))


def _fallback(message: BotMessage, code: str, reason: str) -> BotMessage:
    record: dict[str, JsonValue] = {"code": code, "message": reason}
    return replace(message, metadata={**message.metadata, "rephrase_fallback": record})


def _called(
    definition: AgentDefinition,
    request: ModelRequest,
    response: ModelResponse,
    elapsed_ms: float,
    purpose: str,
) -> ModelCalled:
    """The `model_called` record of a finished rephrase call (as `keel.loop.model_call`
    records the loop's calls: tokens, latency, cost, the request as sent and the reply)."""
    integrations = definition.integrations
    spec = spec_for(integrations, response.model, group_id=group_id_for(integrations, request.tier))
    sent = [dict(m) for m in request.messages]
    meta: dict[str, JsonValue] = {
        "tier_reason": "rephrase calls use the router tier",
        "purpose": purpose,
        "request": freeze_json({"messages": sent, "tools": []}),
        "reply": freeze_json(dict(response.to_message())),
    }
    return model_called(request, response, spec=spec, elapsed_ms=elapsed_ms, metadata=meta)
