"""The plan cache over HTTP: a recorded turn, feedback on it, the admin view and maintenance."""

from __future__ import annotations

from pathlib import Path

from server_kit import ALICE, BOB, ROOT_KEY, ServeFactory

AGENT = Path(__file__).resolve().parents[1] / "unit" / "loop" / "plans_agent"
URL = "/v1/conversations/c1"
LOOKUP = [
    "Hi, how can I help?",
    {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "12"}}]},
    "Order 12 is pending.",
]


async def _events(client: object) -> list[dict[str, object]]:
    reply = (await client.get(f"{URL}/events", headers=ALICE)).json()  # type: ignore[attr-defined]
    return [item["event"] for item in reply["events"]]


async def _recorded_turn(s: object) -> str:
    client = s.client  # type: ignore[attr-defined]
    for text in ("/orders", "where is order 12?"):
        r = await client.post(f"{URL}/messages", json={"text": text}, headers=ALICE)
        assert r.status_code == 200, r.text
    events = await _events(client)
    decided = [e for e in events if e["type"] == "plan_cache_decided"]
    assert [(e["layer"], e["reason"]) for e in decided][-1] == ("record", "recorded")
    return str([e for e in events if e["type"] == "turn_started"][-1]["turn_id"])


async def test_an_approval_promotes_the_turns_plan_and_the_admin_sees_it(
    serve: ServeFactory,
) -> None:
    async with serve(LOOKUP, project=AGENT) as s:
        turn_id = await _recorded_turn(s)
        r = await s.client.post(
            f"{URL}/turns/{turn_id}/feedback", json={"signal": "approve"}, headers=ALICE
        )
        assert r.status_code == 200, r.text
        assert r.json()["signal"] == "approve" and r.json()["changed"]
        plans = (await s.client.get("/v1/admin/plans", headers=ROOT_KEY)).json()
        assert plans["counts"]["l0"] == 1 and plans["counts"]["l1_active"] == 1
        events = await _events(s.client)
        assert events[-1]["type"] == "plan_cache_decided" and events[-1]["layer"] == "feedback"


async def test_bad_feedback_is_refused_with_a_reason_and_changes_nothing(
    serve: ServeFactory,
) -> None:
    async with serve(LOOKUP, project=AGENT) as s:
        turn_id = await _recorded_turn(s)
        before = (await s.client.get("/v1/admin/plans", headers=ROOT_KEY)).json()["counts"]
        cases = [
            (f"{URL}/turns/{turn_id}/feedback", {"signal": "love"}, ALICE, 422),
            (f"{URL}/turns/{turn_id}/feedback", {"signal": "approve", "x": 1}, ALICE, 422),
            (f"{URL}/turns/nope/feedback", {"signal": "approve"}, ALICE, 409),
            (f"{URL}/turns/{turn_id}/feedback", {"signal": "approve"}, BOB, 404),
            ("/v1/conversations/none/turns/t/feedback", {"signal": "reject"}, ALICE, 404),
        ]
        for url, body, headers, status in cases:
            r = await s.client.post(url, json=body, headers=headers)
            assert r.status_code == status, (url, body, r.text)
            assert r.json()["error"]["code"]
        after = (await s.client.get("/v1/admin/plans", headers=ROOT_KEY)).json()["counts"]
        assert after == before


async def test_maintenance_runs_on_demand_for_admins_only(serve: ServeFactory) -> None:
    async with serve(LOOKUP, project=AGENT) as s:
        await _recorded_turn(s)
        denied = await s.client.post("/v1/admin/plans/maintain", headers=ALICE)
        assert denied.status_code == 403
        r = await s.client.post("/v1/admin/plans/maintain", headers=ROOT_KEY)
        assert r.status_code == 200, r.text
        changed = r.json()["changed"]
        # Every skill's cache is maintained against its own tools only: the `planned`
        # skill's run does not judge the `orders` entry.
        assert changed["kept"] == 1 and changed["missing_tool"] == 0 and changed["drifted"] == 0
        plans = (await s.client.get("/v1/admin/plans", headers=ROOT_KEY)).json()
        assert plans["counts"]["l0"] == 1  # a fresh, valid entry survives


async def test_maintenance_without_a_cache_is_a_conflict(serve: ServeFactory) -> None:
    async with serve() as s:
        r = await s.client.post("/v1/admin/plans/maintain", headers=ROOT_KEY)
        assert r.status_code == 409 and r.json()["error"]["code"] == "plan.cache_disabled"
