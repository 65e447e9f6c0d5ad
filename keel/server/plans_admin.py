"""Admin endpoints of the plan cache (scope `admin`): inspect, delete and flush entries.

Reads and writes `ServerRuntime.plan_store`, the store the engine's plan caches use (in
the event store's database); the JSON shapes are in `keel.server.plans_wire`. Deleting or
flushing is immediate and irreversible.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path, Query
from fastapi.responses import JSONResponse

from keel.server.deps import AdminKey, Runtime
from keel.server.errors import ERROR_RESPONSES, ApiError
from keel.server.plans_wire import (
    AntiReply,
    DeleteReply,
    FlushReply,
    FlushRequest,
    ObservationsReply,
    PlanEntryOut,
    PlansReply,
    anti_out,
    counts_out,
    entry_out,
    observation_out,
)
from keel.server.wire import ErrorReply

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
    from keel.loop.plan_scope import maintain_all

    engine = runtime.engine
    if engine.plans is None:
        raise ApiError(409, "plan.cache_disabled", "the agent does not enable plan_cache")
    now = runtime.clock.now().timestamp()
    return JSONResponse({"changed": await maintain_all(engine.plans, engine.definition, now)})


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
