"""Admin endpoints of the plan cache (scope `admin`): inspect, delete and flush entries.

Reads and writes `ServerRuntime.plan_store`, the store the engine's plan caches use (in
the event store's database). Deleting or flushing is immediate and irreversible.

The JSON shapes are converted from the store's rows: stored JSON texts are sent parsed (a
text that is not JSON is sent as the text); embeddings are not sent, only whether there is
one.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from keel.plans.store_port import AntiEntry, Observation, TemplateRow
from keel.server.deps import AdminKey, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.wire import ErrorReply

# JSON shapes, and their conversions from the store's rows.


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


# The endpoints.

router = APIRouter(prefix="/v1/admin/plans", tags=["admin"], responses=ERROR_RESPONSES)

LayerQuery = Literal["l0", "l1"]
StatusQuery = Literal["active", "shadow", "demoted", "stale"]
EntryId = Annotated[str, Path(min_length=1, max_length=255, description="The entry's id.")]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorReply, "description": "No entry has this id (`plan.not_found`)."}
}


@router.get("", response_model=PlansReply)
async def list_plans(
    principal: AdminKey,
    runtime: Runtime,
    layer: Annotated[LayerQuery | None, Query(description="Only this layer.")] = None,
    status: Annotated[StatusQuery | None, Query(description="Only this status.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
) -> JSONResponse:
    """Counts, and the entries (newest first)."""
    store = runtime.plan_store
    counts = await store.counts()
    entries = await store.entries(layer=layer, status=status, limit=limit)
    reply: PlansReply = {
        "counts": counts_out(counts),
        "entries": [entry_out(row) for row in entries],
    }
    return JSONResponse(reply)


@router.get("/observations", response_model=ObservationsReply)
async def list_observations(
    principal: AdminKey,
    runtime: Runtime,
    scope: Annotated[str | None, Query(description="With intent_sig: only these.")] = None,
    intent_sig: Annotated[str | None, Query(description="With scope: only these.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 30,
) -> JSONResponse:
    """The most recent observations (newest first), or every observation of one intent in
    one scope (oldest first) when `scope` and `intent_sig` are given."""
    store = runtime.plan_store
    if scope is not None and intent_sig is not None:
        found = (await store.observations(scope, intent_sig))[:limit]
    elif scope is None and intent_sig is None:
        found = await store.recent_observations(limit)
    else:
        raise ApiError(422, "request.invalid", "give both scope and intent_sig, or neither")
    reply: ObservationsReply = {"observations": [observation_out(o) for o in found]}
    return JSONResponse(reply)


@router.get("/anti", response_model=AntiReply)
async def list_anti(principal: AdminKey, runtime: Runtime) -> JSONResponse:
    """Every anti-entry, expired ones included (`active` tells them apart)."""
    now = runtime.clock.now().timestamp()
    reply: AntiReply = {"anti": [anti_out(e, now) for e in await runtime.plan_store.all_anti()]}
    return JSONResponse(reply)


@router.post("/flush", response_model=FlushReply)
async def flush(
    principal: AdminKey, runtime: Runtime, body: Annotated[FlushRequest, Body()]
) -> JSONResponse:
    """Delete every entry of a layer (`l1` and `all` also drop observations and
    anti-entries). Irreversible."""
    deleted = await runtime.plan_store.flush(body["layer"])
    reply: FlushReply = {"layer": body["layer"], "deleted": deleted}
    return JSONResponse(reply)


@router.post("/maintain")
async def maintain(principal: AdminKey, runtime: Runtime) -> JSONResponse:
    """Run the cache maintenance now (aging, vanished tools, re-validation against the
    current tools); answers the counts of what changed (409 when the agent has no cache)."""
    engine = runtime.engine
    if engine.plans is None:
        raise ApiError(409, "plan.cache_disabled", "the agent does not enable plan_cache")
    now = runtime.clock.now().timestamp()
    return JSONResponse({"changed": await engine.plans.maintain(engine.definition, now)})


@router.get("/{entry_id}", response_model=PlanEntryOut, responses=_NOT_FOUND)
async def get_plan(principal: AdminKey, runtime: Runtime, entry_id: EntryId) -> JSONResponse:
    """One entry."""
    row = await runtime.plan_store.get(entry_id)
    if row is None:
        raise _not_found(entry_id)
    return JSONResponse(entry_out(row))


@router.delete("/{entry_id}", response_model=DeleteReply, responses=_NOT_FOUND)
async def delete_plan(principal: AdminKey, runtime: Runtime, entry_id: EntryId) -> JSONResponse:
    """Delete one entry. Irreversible."""
    if not await runtime.plan_store.delete(entry_id):
        raise _not_found(entry_id)
    reply: DeleteReply = {"id": entry_id, "deleted": True}
    return JSONResponse(reply)


def _not_found(entry_id: str) -> ApiError:
    return ApiError(404, "plan.not_found", f"no plan cache entry {entry_id!r}")
