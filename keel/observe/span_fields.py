"""The encoded fields of a turn's spans that repeat from run to run, made once and kept:
the folded commits, stage durations, decision and pause events, the turn span's head
(`keel.observe.turn_spans` writes the spans around them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import cast

from keel.events.model import (
    Event,
    HistoryCompressed,
    PausePointCreated,
    PausePointResolved,
    PlanCacheDecided,
    RoutingDecided,
    StagesTimed,
    StageTimed,
)
from keel.observe import genai, otlp
from keel.observe.digest import Turn
from keel.observe.otlp import AttributeValue
from keel.observe.record import Commit


def commit_fields(commits: Sequence[Commit]) -> tuple[bytes, ...]:
    """The turn's commits folded: how many, their events, total and longest time (ms)."""
    events = 0
    total = longest = 0.0
    for first_seq, last_seq, stamped, stored in commits:
        events += last_seq - first_seq + 1
        took = stored - stamped
        if took > 0.0:
            total += took
            if took > longest:
                longest = took
    f = otlp.field
    return (
        f("keel.store.commits", len(commits)),
        f("keel.store.events", events),
        f("keel.store.commit_ms", total * 1000),
        f("keel.store.commit_max_ms", longest * 1000),
    )


def stage_fields(turn: Turn) -> list[bytes]:
    """`keel.stage.<stage>.ms` of the turn's `stages_timed` (or older `stage_timed`s)."""
    found: list[bytes] = []
    for event in turn.noted:
        kind = type(event)
        if kind is StagesTimed:
            for stage, ms in cast(StagesTimed, event).durations_ms.items():
                if type(ms) is float or type(ms) is int:
                    found.append((_STAGE_FIELDS.get(stage) or _stage_field(stage))(ms))
        elif kind is StageTimed:
            timed = cast(StageTimed, event)
            found.append(_stage_field(timed.stage)(timed.duration_ms))
    return found


_STAGE_FIELDS: dict[str, Callable[[float], bytes]] = {}
"""Stage -> the writer of its `keel.stage.<stage>.ms` field (`otlp.float_writer`)."""


def _stage_field(stage: str) -> Callable[[float], bytes]:
    found = _STAGE_FIELDS.get(stage)
    if found is None:
        if len(_STAGE_FIELDS) >= 256:
            _STAGE_FIELDS.clear()
        found = _STAGE_FIELDS[stage] = otlp.float_writer(f"keel.stage.{stage}.ms")
    return found


EVENT_PARTS: dict[tuple[object, ...], tuple[bytes, bytes]] = {}
"""(kind, its attribute values...) -> its span event's field (`otlp.event_parts`): decisions
repeat, but for their time."""


def event_parts(event: Event, key: tuple[object, ...]) -> tuple[bytes, bytes]:
    """The span event of a decision, pause point or compression (`EVENT_PARTS`)."""
    attributes: dict[str, AttributeValue]
    if isinstance(event, RoutingDecided):
        attributes = {"keel.routing.source": event.source}
        if event.skill_id is not None:
            attributes["keel.skill.id"] = event.skill_id
        if event.tier is not None:
            attributes["keel.model.tier"] = event.tier
        name = "routing_decided"
    elif isinstance(event, PlanCacheDecided):
        attributes = {
            "keel.plan.layer": event.layer,
            "keel.plan.hit": event.hit,
            "keel.plan.reason": event.reason,
        }
        name = "plan_cache_decided"
    elif isinstance(event, PausePointCreated):
        attributes = {"keel.pause.id": event.pause_id, genai.TOOL_NAME: event.tool_name}
        name = "pause_point_created"
    elif isinstance(event, PausePointResolved):
        attributes = {"keel.pause.id": event.pause_id}
        attributes["keel.pause.approved"] = event.approved
        name = "pause_point_resolved"
    else:
        compressed = cast(HistoryCompressed, event)
        attributes = {
            "keel.history.tokens_before": compressed.tokens_before,
            "keel.history.tokens_after": compressed.tokens_after,
            "keel.history.dropped_messages": compressed.dropped_messages,
        }
        name = "history_compressed"
    if len(EVENT_PARTS) >= 1024:
        EVENT_PARTS.clear()
    found = EVENT_PARTS[key] = otlp.event_parts(name, attributes)
    return found


def event_key(event: Event) -> tuple[object, ...]:
    """What a decision's span event holds, but its time."""
    kind = type(event)
    if kind is RoutingDecided:
        routed = cast(RoutingDecided, event)
        return (kind, routed.source, routed.skill_id, routed.tier)
    if kind is PlanCacheDecided:
        decided = cast(PlanCacheDecided, event)
        return (kind, decided.layer, decided.hit, decided.reason)
    if kind is PausePointCreated:
        created = cast(PausePointCreated, event)
        return (kind, created.pause_id, created.tool_name)
    if kind is PausePointResolved:
        resolved = cast(PausePointResolved, event)
        return (kind, resolved.pause_id, resolved.approved)
    compressed = cast(HistoryCompressed, event)
    return (
        kind,
        compressed.tokens_before,
        compressed.tokens_after,
        compressed.dropped_messages,
    )


_TURN_HEADS: dict[str, tuple[bytes, bytes]] = {}
"""Agent name -> its turn spans' name and kind, and first attributes."""


def turn_head(agent: str) -> tuple[bytes, bytes]:
    found = _TURN_HEADS.get(agent)
    if found is None:
        if len(_TURN_HEADS) >= 64:
            _TURN_HEADS.clear()
        named = otlp.name_kind(f"{genai.INVOKE_AGENT} {agent}", otlp.INTERNAL)
        fields = otlp.field(genai.OPERATION, genai.INVOKE_AGENT) + otlp.field(
            genai.AGENT_NAME, agent
        )
        found = _TURN_HEADS[agent] = (named, fields)
    return found


def finish_reason(meta: Mapping[str, object]) -> str | None:
    """The provider's finish reason, when the event recorded one."""
    for key in ("finish_reason", "stop_reason"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    return None
