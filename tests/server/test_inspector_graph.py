"""The Inspector's graph endpoint: the agent's `keel graph` flowchart with the step the
conversation was at after an event marked `current`."""

from __future__ import annotations

from typing import Any

from server_kit import ACTIVATE_OUTAGE, ALICE, ROOT_KEY, SET_POSTCODE, ServeFactory

from keel.project.graph import mermaid_graph

BASE = "/v1/admin/conversations/alice/c1"


def _block_top(state: dict[str, Any]) -> tuple[str, str, str] | None:
    """(skill, block, step) of the innermost ordered block on a state reply's stack."""
    for frame in reversed(state["stack"]):
        if frame["type"] == "ordered_block" and frame["step_id"] is not None:
            return frame["skill_id"], frame["block_id"], frame["step_id"]
    return None


async def test_the_graph_marks_the_step_the_conversation_was_at(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        answer = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        assert answer.status_code == 200
        last = int(answer.json()["last_seq"])
        events = (await s.client.get(f"{BASE}/events", headers=ROOT_KEY)).json()["events"]
        greeted = next(
            int(e["seq"]) for e in events if e["event"]["type"] == "bot_message"
        )  # in the session start's block
        seen = {}
        for seq in (greeted, last):
            state = (await s.client.get(f"{BASE}/state?seq={seq}", headers=ROOT_KEY)).json()
            graph = (await s.client.get(f"{BASE}/graph?seq={seq}", headers=ROOT_KEY)).json()
            seen[seq] = (_block_top(state), graph)
        latest = (await s.client.get(f"{BASE}/graph", headers=ROOT_KEY)).json()
        before = (await s.client.get(f"{BASE}/graph?seq=0", headers=ROOT_KEY)).json()
        definition = s.runtime.definition
    for seq, (top, graph) in seen.items():
        assert top is not None, seq
        current = graph["current"]
        assert (current["skill_id"], current["block_id"], current["step_id"]) == top
        assert graph["mermaid"] == mermaid_graph(definition, highlight=".".join(top))
        assert f"  class {current['node_id']} current" in graph["mermaid"].splitlines()
        assert (graph["owner"], graph["conversation_id"], graph["seq"]) == ("alice", "c1", seq)
    assert seen[greeted][0] != seen[last][0]  # the mark follows the event chosen
    assert seen[last][0] == ("report_outage", "troubleshoot", "ask_postcode")
    assert latest == seen[last][1]  # by default: after the log's last event
    assert before["current"] is None  # nothing folded: no block, nothing marked
    assert before["mermaid"] == mermaid_graph(definition)
    assert "current" not in before["mermaid"]


async def test_the_graph_answers_coded_errors(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        past = await s.client.get(f"{BASE}/graph?seq=999999", headers=ROOT_KEY)
        unknown = await s.client.get("/v1/admin/conversations/alice/nope/graph", headers=ROOT_KEY)
        not_admin = await s.client.get(f"{BASE}/graph", headers=ALICE)
        negative = await s.client.get(f"{BASE}/graph?seq=-1", headers=ROOT_KEY)
    assert past.status_code == 422
    assert past.json()["error"]["code"] == "conversation.seq_out_of_range"
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "conversation.not_found"
    assert not_admin.status_code == 403
    assert negative.status_code == 422
    assert negative.json()["error"]["code"] == "request.invalid"
