"""JSON shapes of the plan cache admin endpoints (`keel.server.plans_admin`), and the
conversions from the store's rows. Stored JSON texts are sent parsed (a text that is not
JSON is sent as the text); embeddings are not sent, only whether there is one.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from keel.plans.store_port import AntiEntry, Observation, TemplateRow


class PlanCounts(TypedDict):
    """How many entries of each kind the cache holds."""

    l0: int
    l1_active: int
    l1_shadow: int
    l1_demoted: int
    l1_stale: int
    observations: int
    anti: int


class PlanEntryOut(TypedDict):
    """One cache entry (L0 exact entry or L1 candidate)."""

    id: str
    layer: str
    scope: str
    key: str
    intent_sig: str
    slot_sig: str
    shape_hash: str
    plan: Any
    intent: Any
    bindings: Any
    request_text: str
    tools_sig: str
    pool_sig: str
    logic_sig: str
    effectful: bool
    status: str
    origin: str
    has_embedding: bool
    embedder_id: str | None
    threshold: float
    alpha: float
    beta: float
    n_served: int
    created_at: float
    last_served_at: float


class PlansReply(TypedDict):
    """`GET /v1/admin/plans`."""

    counts: PlanCounts
    entries: list[PlanEntryOut]


class ObservationOut(TypedDict):
    """One recorded outcome of a plan."""

    turn_id: str
    scope: str
    intent_sig: str
    shape_hash: str
    template_id: str | None
    plan: Any
    raw_plan: Any
    outcome: str
    signal: str
    signal_weight: float
    ts: float


class ObservationsReply(TypedDict):
    """`GET /v1/admin/plans/observations`."""

    observations: list[ObservationOut]


class AntiOut(TypedDict):
    """A shape barred from serving an intent until `expires_at`."""

    scope: str
    intent_sig: str
    shape_hash: str
    weight: float
    expires_at: float
    reason: str
    active: bool
    """Not expired yet (by the server's clock)."""


class AntiReply(TypedDict):
    """`GET /v1/admin/plans/anti`."""

    anti: list[AntiOut]


class DeleteReply(TypedDict):
    """`DELETE /v1/admin/plans/{entry_id}`."""

    id: str
    deleted: bool


@with_config(ConfigDict(extra="forbid"))
class FlushRequest(TypedDict):
    """`POST /v1/admin/plans/flush`: `l0` (exact entries), `l1` (candidates, observations
    and anti-entries) or `all`."""

    layer: Literal["l0", "l1", "all"]


class FlushReply(TypedDict):
    """What a flush removed."""

    layer: str
    deleted: int
    """Cache entries deleted (observations and anti-entries are not counted)."""


def stored_json(text: str) -> Any:
    """The stored JSON text, parsed (None when empty; the text itself when not JSON)."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def counts_out(counts: dict[str, int]) -> PlanCounts:
    return {
        "l0": counts.get("l0", 0),
        "l1_active": counts.get("l1_active", 0),
        "l1_shadow": counts.get("l1_shadow", 0),
        "l1_demoted": counts.get("l1_demoted", 0),
        "l1_stale": counts.get("l1_stale", 0),
        "observations": counts.get("observations", 0),
        "anti": counts.get("anti", 0),
    }


def entry_out(row: TemplateRow) -> PlanEntryOut:
    return {
        "id": row.id,
        "layer": row.layer,
        "scope": row.scope,
        "key": row.key,
        "intent_sig": row.intent_sig,
        "slot_sig": row.slot_sig,
        "shape_hash": row.shape_hash,
        "plan": stored_json(row.plan_json),
        "intent": stored_json(row.stored_intent_json),
        "bindings": stored_json(row.bindings_json),
        "request_text": row.request_text,
        "tools_sig": row.tools_sig,
        "pool_sig": row.pool_sig,
        "logic_sig": row.logic_sig,
        "effectful": row.effectful,
        "status": row.status,
        "origin": row.origin,
        "has_embedding": row.embedding is not None,
        "embedder_id": row.embedder_id,
        "threshold": row.threshold,
        "alpha": row.alpha,
        "beta": row.beta,
        "n_served": row.n_served,
        "created_at": row.created_at,
        "last_served_at": row.last_served_at,
    }


def observation_out(o: Observation) -> ObservationOut:
    return {
        "turn_id": o.turn_id,
        "scope": o.scope,
        "intent_sig": o.intent_sig,
        "shape_hash": o.shape_hash,
        "template_id": o.template_id,
        "plan": stored_json(o.plan_json),
        "raw_plan": stored_json(o.raw_plan_json),
        "outcome": o.outcome,
        "signal": o.signal,
        "signal_weight": o.signal_weight,
        "ts": o.ts,
    }


def anti_out(e: AntiEntry, now: float) -> AntiOut:
    return {
        "scope": e.scope,
        "intent_sig": e.intent_sig,
        "shape_hash": e.shape_hash,
        "weight": e.weight,
        "expires_at": e.expires_at,
        "reason": e.reason,
        "active": e.expires_at > now,
    }
