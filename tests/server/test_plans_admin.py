"""Admin endpoints of the plan cache, through the app on a real SQLite file."""

from __future__ import annotations

import dataclasses

import pytest
from server_kit import ALICE, ROOT_KEY, Served, ServeFactory

from keel.loop.cascade import Cascade
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.sql_store import SqlPlanStore
from keel.plans.store_port import AntiEntry, Observation, TemplateRow
from keel.server.runtime import plan_store_beside
from keel.stores.memory import InMemoryEventStore

ROW = TemplateRow(
    id="e1",
    layer="l0",
    scope="agent/skill",
    key="k1",
    intent_sig="list>file",
    slot_sig="PATH:path",
    shape_hash="abcd",
    plan_json='{"steps": [{"tool": "list_files", "args": {"path": "${SLOT:PATH}"}}]}',
    stored_intent_json='[{"verb": "list", "object": "file"}]',
    bindings_json='{"PATH": "/tmp"}',
    request_text="list the files in /tmp",
    tools_sig="t",
    pool_sig="p",
    logic_sig="l",
    effectful=False,
    embedding=b"\x01",
    created_at=10.0,
)


async def _seed(s: Served) -> None:
    store = s.runtime.plan_store
    await store.put(ROW)
    await store.put(dataclasses.replace(ROW, id="e2", layer="l1", key="k2", created_at=20.0))
    await store.put(
        dataclasses.replace(
            ROW, id="e3", layer="l1", key="k3", status="demoted", plan_json="not json"
        )
    )
    for turn, ts in (("t1", 1.0), ("t2", 2.0)):
        await store.add_observation(
            Observation(
                turn_id=turn,
                scope="agent/skill",
                intent_sig="list>file",
                shape_hash="abcd",
                plan_json='{"steps": []}',
                ts=ts,
            )
        )
    now = s.clock.now().timestamp()
    for shape, expires in (("live", now + 60), ("old", now - 60)):
        await store.put_anti(
            AntiEntry(
                scope="agent/skill",
                intent_sig="list>file",
                shape_hash=shape,
                weight=1.0,
                expires_at=expires,
                reason="reject",
            )
        )


async def test_the_runtime_plan_store_is_on_the_event_store_database(
    serve: ServeFactory,
) -> None:
    async with serve() as s:
        assert isinstance(s.runtime.plan_store, SqlPlanStore)
        await s.runtime.plan_store.put(ROW)
        again = SqlPlanStore(s.store.engine)  # type: ignore[attr-defined]
        assert await again.get("e1") == ROW


def test_the_plan_store_beside_a_memory_store_or_the_engines() -> None:
    events = InMemoryEventStore()
    assert isinstance(plan_store_beside(None, events), MemoryPlanStore)
    mine = MemoryPlanStore()
    assert plan_store_beside(Cascade(store=mine, agent="a"), events) is mine


async def test_listing_counts_and_filters(serve: ServeFactory) -> None:
    async with serve() as s:
        empty = (await s.client.get("/v1/admin/plans", headers=ROOT_KEY)).json()
        await _seed(s)
        everything = await s.client.get("/v1/admin/plans", headers=ROOT_KEY)
        l1 = (await s.client.get("/v1/admin/plans?layer=l1", headers=ROOT_KEY)).json()
        demoted = await s.client.get("/v1/admin/plans?status=demoted&limit=5", headers=ROOT_KEY)
        one = await s.client.get("/v1/admin/plans?limit=1", headers=ROOT_KEY)
    assert empty == {
        "counts": {
            "l0": 0,
            "l1_active": 0,
            "l1_shadow": 0,
            "l1_demoted": 0,
            "l1_stale": 0,
            "observations": 0,
            "anti": 0,
        },
        "entries": [],
    }
    assert everything.status_code == 200
    body = everything.json()
    assert body["counts"] == {
        "l0": 1,
        "l1_active": 1,
        "l1_shadow": 0,
        "l1_demoted": 1,
        "l1_stale": 0,
        "observations": 2,
        "anti": 2,
    }
    assert [e["id"] for e in body["entries"]] == ["e2", "e1", "e3"]
    first = body["entries"][1]
    assert first["plan"]["steps"][0]["tool"] == "list_files"
    assert first["bindings"] == {"PATH": "/tmp"}
    assert first["intent"] == [{"verb": "list", "object": "file"}]
    assert first["has_embedding"] is True and "embedding" not in first
    assert body["entries"][2]["plan"] == "not json"
    assert [e["id"] for e in l1["entries"]] == ["e2", "e3"]
    assert [e["id"] for e in demoted.json()["entries"]] == ["e3"]
    assert [e["id"] for e in one.json()["entries"]] == ["e2"]


@pytest.mark.parametrize("query", ["layer=l2", "status=gone", "limit=0"])
async def test_bad_listing_queries_are_422(serve: ServeFactory, query: str) -> None:
    async with serve() as s:
        r = await s.client.get(f"/v1/admin/plans?{query}", headers=ROOT_KEY)
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "request.invalid"


async def test_get_and_delete_one_entry(serve: ServeFactory) -> None:
    async with serve() as s:
        await _seed(s)
        got = await s.client.get("/v1/admin/plans/e1", headers=ROOT_KEY)
        deleted = await s.client.delete("/v1/admin/plans/e1", headers=ROOT_KEY)
        gone = await s.client.get("/v1/admin/plans/e1", headers=ROOT_KEY)
        twice = await s.client.delete("/v1/admin/plans/e1", headers=ROOT_KEY)
        left = await s.runtime.plan_store.entries()
    assert got.status_code == 200 and got.json()["id"] == "e1"
    assert got.json()["request_text"] == "list the files in /tmp"
    assert deleted.status_code == 200 and deleted.json() == {"id": "e1", "deleted": True}
    for r in (gone, twice):
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "plan.not_found"
        assert "'e1'" in r.json()["error"]["message"]
    assert [r.id for r in left] == ["e2", "e3"]


async def test_flush_by_layer(serve: ServeFactory) -> None:
    async with serve() as s:
        await _seed(s)
        l0 = await s.client.post("/v1/admin/plans/flush", json={"layer": "l0"}, headers=ROOT_KEY)
        after_l0 = await s.runtime.plan_store.counts()
        l1 = await s.client.post("/v1/admin/plans/flush", json={"layer": "l1"}, headers=ROOT_KEY)
        after_l1 = await s.runtime.plan_store.counts()
        await _seed(s)
        every = await s.client.post(
            "/v1/admin/plans/flush", json={"layer": "all"}, headers=ROOT_KEY
        )
        after_all = await s.runtime.plan_store.counts()
    assert l0.json() == {"layer": "l0", "deleted": 1}
    assert after_l0["l0"] == 0 and after_l0["l1_active"] == 1 and after_l0["observations"] == 2
    assert l1.json() == {"layer": "l1", "deleted": 2}
    assert after_l1["observations"] == 0 and after_l1["anti"] == 0
    assert every.json() == {"layer": "all", "deleted": 3}
    assert set(after_all.values()) == {0}


@pytest.mark.parametrize(
    "body", [{"layer": "l2"}, {}, {"layer": "all", "extra": 1}, {"layer": None}]
)
async def test_a_bad_flush_is_422_with_a_reason(serve: ServeFactory, body: object) -> None:
    async with serve() as s:
        await _seed(s)
        r = await s.client.post("/v1/admin/plans/flush", json=body, headers=ROOT_KEY)
        counts = await s.runtime.plan_store.counts()
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "request.invalid" and error["details"]
    assert "layer" in error["message"] or "extra" in error["message"]
    assert counts["l0"] == 1  # nothing was flushed


async def test_observations_recent_and_by_intent(serve: ServeFactory) -> None:
    async with serve() as s:
        await _seed(s)
        recent = await s.client.get("/v1/admin/plans/observations", headers=ROOT_KEY)
        one = await s.client.get("/v1/admin/plans/observations?limit=1", headers=ROOT_KEY)
        by_intent = await s.client.get(
            "/v1/admin/plans/observations",
            params={"scope": "agent/skill", "intent_sig": "list>file"},
            headers=ROOT_KEY,
        )
        half = await s.client.get(
            "/v1/admin/plans/observations?scope=agent/skill", headers=ROOT_KEY
        )
    assert [o["turn_id"] for o in recent.json()["observations"]] == ["t2", "t1"]
    assert recent.json()["observations"][0]["plan"] == {"steps": []}
    assert recent.json()["observations"][0]["raw_plan"] is None
    assert [o["turn_id"] for o in one.json()["observations"]] == ["t2"]
    assert [o["turn_id"] for o in by_intent.json()["observations"]] == ["t1", "t2"]
    assert half.status_code == 422 and half.json()["error"]["code"] == "request.invalid"


async def test_anti_entries_with_their_state(serve: ServeFactory) -> None:
    async with serve() as s:
        await _seed(s)
        r = await s.client.get("/v1/admin/plans/anti", headers=ROOT_KEY)
    assert r.status_code == 200
    assert [(a["shape_hash"], a["active"]) for a in r.json()["anti"]] == [
        ("live", True),
        ("old", False),
    ]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/admin/plans", None),
        ("GET", "/v1/admin/plans/e1", None),
        ("DELETE", "/v1/admin/plans/e1", None),
        ("POST", "/v1/admin/plans/flush", {"layer": "all"}),
        ("GET", "/v1/admin/plans/observations", None),
        ("GET", "/v1/admin/plans/anti", None),
    ],
)
async def test_chat_keys_get_403_and_no_key_401(
    serve: ServeFactory, method: str, path: str, body: object
) -> None:
    async with serve() as s:
        await _seed(s)
        chat = await s.client.request(method, path, json=body, headers=ALICE)
        anonymous = await s.client.request(method, path, json=body)
        counts = await s.runtime.plan_store.counts()
    assert chat.status_code == 403 and chat.json()["error"]["code"] == "auth.scope"
    assert anonymous.status_code == 401
    assert counts["l0"] == 1 and counts["l1_active"] == 1  # nothing changed
