"""One model round trip: the request (`keel.loop.model_request`) sent, counted against the
turn's budget and recorded as `model_called`."""

from __future__ import annotations

import logging
from contextlib import aclosing
from datetime import timedelta

from keel.events.model import HistoryCompressed
from keel.knowledge.section import KnowledgeSection
from keel.llm.errors import ProviderUnavailable
from keel.llm.port import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    TextDelta,
)
from keel.llm.tiers import group_id_for
from keel.llm.usage import spec_for
from keel.loop.history import Fitted
from keel.loop.model_record import model_called, request_record
from keel.loop.model_request import build_request, call_offers
from keel.loop.offer import (
    Offer,
)
from keel.loop.turn import TurnContext
from keel.project.integrations import IntegrationsConfig
from keel.project.model_groups import ModelSpec

_log = logging.getLogger(__name__)


def served_by(t: TurnContext, model: str, tier: str) -> ModelSpec | None:
    """The configured model that answered (for its prices). Providers may answer with a
    dated id (`gpt-4.1-2025-04-14` for `gpt-4.1`): the longest configured id of the tier's
    group that starts the answered id counts; else the group's first model."""
    integrations = t.definition.integrations
    last = _last_served[0]
    if last is not None and last[0] is integrations and last[1] == model and last[2] == tier:
        return last[3]  # pure in the (frozen) configuration, the model and the tier
    found = _served_by(integrations, model, tier)
    _last_served[0] = (integrations, model, tier, found)
    return found


def _served_by(integrations: IntegrationsConfig, model: str, tier: str) -> ModelSpec | None:
    group_id = group_id_for(integrations, tier)
    exact = spec_for(integrations, model, group_id=group_id)
    if exact is not None:
        return exact
    group = integrations.group(group_id)
    if group is None or not group.models:
        return None
    prefixed = [m for m in group.models if model.startswith(m.model)]
    return max(prefixed, key=lambda m: len(m.model)) if prefixed else group.models[0]


_last_served: list[tuple[IntegrationsConfig, str, str, ModelSpec | None] | None] = [None]


def _compressed(t: TurnContext, fitted: Fitted) -> HistoryCompressed:
    kept = ["current_turn_messages"]
    if t.recorder.state.pending_confirmation is not None:
        kept.append("pending_confirmation")
    if t.active_skill is not None:
        kept.append("collected_values")
    return HistoryCompressed(
        budget_tokens=t.definition.integrations.llm.max_prompt_tokens or 0,
        tokens_before=fitted.tokens_before or 0,
        tokens_after=fitted.tokens_after or 0,
        dropped_messages=fitted.dropped,
        kept=tuple(kept),
        metadata={
            "dropped_tool_pairs": fitted.dropped_tool_pairs,
            "dropped_tool_results": fitted.dropped_tool_results,
        },
    )


def _log_dropped(t: TurnContext, fitted: Fitted) -> None:
    """Operators see what the budget cut from the model's view (also `history_compressed`)."""
    ids = {"conversation_id": t.recorder.conversation_id, "turn_id": t.turn_id}
    _log.info(
        "history: %d earlier messages (%d tool call/result pairs, %d tool results) dropped to "
        "fit llm.max_prompt_tokens=%s, %d -> %d estimated tokens (conversation %s, turn %s)",
        fitted.dropped,
        fitted.dropped_tool_pairs,
        fitted.dropped_tool_results,
        t.definition.integrations.llm.max_prompt_tokens,
        fitted.tokens_before,
        fitted.tokens_after,
        ids["conversation_id"],
        ids["turn_id"],
        extra=ids,
    )


async def _ask(t: TurnContext, request: ModelRequest) -> ModelResponse:
    """`complete`, or `stream` with text deltas passed on when someone reads them."""
    observer = t.recorder.observer
    stream = getattr(t.model, "stream", None)
    if observer is None or stream is None or not t.recorder.streams_text:
        return await t.model.complete(request)
    async with aclosing(stream(request)) as events:
        async for item in events:
            if isinstance(item, TextDelta) and item.text:
                await observer.text_delta(item.text)
            elif isinstance(item, StreamDone):
                return item.response
    raise ProviderUnavailable("the model's stream ended without a reply")


async def call_model(
    t: TurnContext, knowledge: tuple[KnowledgeSection, ...] = ()
) -> tuple[ModelResponse, tuple[Offer, ...]]:
    """Ask the model once; records `model_called` with tokens and latency."""
    # The `tools.build` stage's end is the prompt's clock reading (one read for both).
    started = t.clock.now()
    try:
        offers = call_offers(t)
    finally:
        built = t.clock.now()
        elapsed = (built - started) / _MILLISECOND
        stage_ms = t.stage_ms
        stage_ms["tools.build"] = (
            stage_ms["tools.build"] + elapsed if "tools.build" in stage_ms else elapsed
        )
    prepared = build_request(t, offers, knowledge, now=built)
    if prepared.fitted.dropped:
        _log_dropped(t, prepared.fitted)
        await t.emit(_compressed(t, prepared.fitted))
    request = prepared.request
    t.last_tier = request.tier
    t.routing_call = t.active_skill is None
    response = await ask_recorded(t, request, tier_reason=prepared.tier.reason)
    return response, offers


_MILLISECOND = timedelta(milliseconds=1)


async def ask_recorded(
    t: TurnContext, request: ModelRequest, *, tier_reason: str, purpose: str | None = None
) -> ModelResponse:
    """One round trip, counted against the turn's budget and recorded as `model_called`
    (with tokens, latency, cost, the request as sent and the reply: replays and the
    Inspector read them).
    `purpose` marks calls that are not the tool-calling loop's (`planner`, `filler`)."""
    # One pair of clock reads for both the record's latency and the `model` stage.
    started = t.clock.now()
    try:
        # Nobody reads the text as it comes (no observer, or a telemetry tap): `complete`,
        # without `_ask`.
        if not t.recorder.streams_text:
            response = await t.model.complete(request)
        else:
            response = await _ask(t, request)
    finally:
        elapsed = (t.clock.now() - started) / _MILLISECOND
        stage_ms = t.stage_ms
        stage_ms["model"] = stage_ms["model"] + elapsed if "model" in stage_ms else elapsed
    t.model_calls += 1
    spec = served_by(t, response.model, request.tier)
    meta: dict[str, object] = {
        "tier_reason": tier_reason,
        "request": request_record(request),
        "reply": response.to_message(),  # a new dict: the record's own
    }
    if purpose is not None:
        meta["purpose"] = purpose
    # Straight to the recorder: a call record is no memory write (no trigger to check).
    await t.recorder.emit(
        model_called(request, response, spec=spec, elapsed_ms=elapsed, metadata=meta)  # type: ignore[arg-type]
    )
    return response
