"""Pause points over HTTP: the `paused` frame, the pending view, approvals exactly once."""

from __future__ import annotations

import asyncio

from server_kit import ALICE, ServeFactory, parse_sse

from keel.events.model import (
    PausePointResolved,
    ToolExecuted,
)

URL = "/v1/conversations/plan"
SSE = {**ALICE, "accept": "text/event-stream"}

PLAN_CHANGE = [
    {"tool_calls": [{"name": "activate", "arguments": {"target_id": "verify_customer"}}]},
    {
        "tool_calls": [
            {"name": "set_fields", "arguments": {"fields": {"account_number": "BW100234"}}}
        ]
    },
    {"tool_calls": [{"name": "set_fields", "arguments": {"fields": {"pin": "4821"}}}]},
    {"tool_calls": [{"name": "activate", "arguments": {"target_id": "change_plan"}}]},
    {"tool_calls": [{"name": "activate", "arguments": {"target_id": "pick_plan"}}]},
    {"tool_calls": [{"name": "switch_plan", "arguments": {}}]},
]
MESSAGES = ["I'd like a faster plan", "BW100234", "4821", "upgrade my plan please"]
TAP = "set:session.change_plan.new_plan=fibre_500"


async def _pause(client: object) -> tuple[str, list[tuple[int | None, str, dict[str, object]]]]:
    for text in MESSAGES:
        r = await client.post(f"{URL}/messages", json={"text": text}, headers=ALICE)  # type: ignore[attr-defined]
        assert r.status_code == 200, r.text
    r = await client.post(f"{URL}/messages", json={"text": TAP}, headers=SSE)  # type: ignore[attr-defined]
    frames = parse_sse(r.text)
    paused = [data for _, name, data in frames if name == "paused"]
    assert len(paused) == 1
    return str(paused[0]["pause_id"]), frames


async def test_a_pause_is_streamed_and_shown_as_pending(serve: ServeFactory) -> None:
    async with serve(PLAN_CHANGE) as s:
        pause_id, frames = await _pause(s.client)
        view = (await s.client.get(URL, headers=ALICE)).json()
        wrong = await s.client.post(f"{URL}/approvals/nope", json={"approved": True}, headers=ALICE)
        not_bool = await s.client.post(
            f"{URL}/approvals/{pause_id}", json={"approved": "yes"}, headers=ALICE
        )
    paused = next(data for _, name, data in frames if name == "paused")
    assert paused["tool"] == "switch_plan"
    assert str(paused["ask"]).startswith("Just to confirm: switch you to Fibre 500")
    assert frames[-1][2]["stop_reason"] == "paused" and frames[-1][2]["state"] == "paused"
    assert view["state"] == "paused"
    assert view["pending_confirmation"]["pause_id"] == pause_id
    assert view["memory"]["verify_customer.pin"] == "[set]"
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "approval.not_pending"
    assert not_bool.status_code == 422


async def test_an_approval_resumes_exactly_once(serve: ServeFactory) -> None:
    async with serve(PLAN_CHANGE) as s:
        pause_id, _ = await _pause(s.client)
        url = f"{URL}/approvals/{pause_id}"
        answers = await asyncio.gather(
            s.client.post(url, json={"approved": True}, headers=ALICE),
            s.client.post(url, json={"approved": True}, headers=ALICE),
        )
        later = await s.client.post(url, json={"approved": False}, headers=ALICE)
        log = [item.event for item in await s.store.read("alice/plan")]
    assert sorted(r.status_code for r in answers) == [200, 409]
    ok = next(r for r in answers if r.status_code == 200).json()
    assert ok["state"] == "idle" and ok["pending_confirmation"] is None and ok["messages"]
    assert later.status_code == 409
    assert [e.approved for e in log if isinstance(e, PausePointResolved)] == [True]
    switched = [e for e in log if isinstance(e, ToolExecuted) and e.tool_name == "switch_plan"]
    assert len(switched) == 1
    assert switched[0].metadata["source"] == "tool_confirmation"
    assert any("Fibre 500" in m["text"] for m in ok["messages"])


async def test_a_pause_withdrawn_with_its_skill_answers_409(serve: ServeFactory) -> None:
    cancel = {"tool_calls": [{"name": "cancel_skill", "arguments": {}}]}
    async with serve([*PLAN_CHANGE, cancel, "OK, I've cancelled the change."]) as s:
        pause_id, _ = await _pause(s.client)
        said = await s.client.post(f"{URL}/messages", json={"text": "cancel"}, headers=ALICE)
        view = (await s.client.get(URL, headers=ALICE)).json()
        late = await s.client.post(
            f"{URL}/approvals/{pause_id}", json={"approved": True}, headers=ALICE
        )
        log = [item.event for item in await s.store.read("alice/plan")]
    assert said.status_code == 200 and said.json()["state"] == "idle"
    assert view["state"] == "idle" and view["pending_confirmation"] is None
    assert late.status_code == 409
    error = late.json()["error"]
    assert error["code"] == "approval.pause_withdrawn"
    assert "skill_cancelled" in error["message"]
    resolved = [e for e in log if isinstance(e, PausePointResolved)]
    assert [(e.approved, e.metadata["reason"]) for e in resolved] == [(False, "skill_cancelled")]
    assert not [e for e in log if isinstance(e, ToolExecuted) and e.tool_name == "switch_plan"]
