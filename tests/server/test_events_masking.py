"""The chat-scope events endpoint masks pii memory exactly as the state endpoint does."""

from __future__ import annotations

from server_kit import ACTIVATE_OUTAGE, ALICE, ROOT_KEY, SET_POSTCODE, ServeFactory

URL = "/v1/conversations/c1"
KEY = "report_outage.postcode"


def _writes(events: list[dict[str, object]]) -> list[object]:
    """The values the log shows written to the pii key (memory_set and slot_set)."""
    found: list[object] = []
    for event in events:
        if event.get("type") == "memory_set" and event.get("key") == KEY:
            found.append(event["value"])
        if event.get("type") == "slot_set" and event.get("name") == KEY:
            found.append(event["value"])
    return found


async def test_the_events_endpoint_masks_pii_memory_like_the_state(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        await s.client.post(f"{URL}/messages", json={"text": "LN4 7QP"}, headers=ALICE)
        state = (await s.client.get(URL, headers=ALICE)).json()
        reply = await s.client.get(f"{URL}/events", headers=ALICE)
        later = await s.client.get(f"{URL}/events?after=3&limit=500", headers=ALICE)
        stored = [item.event for item in await s.store.read("alice/c1")]
    assert reply.status_code == 200, reply.text
    events = [item["event"] for item in reply.json()["events"]]
    assert state["memory"][KEY] == "[set]"
    # The log holds the postcode; the chat view of it shows what the state shows.
    assert any(getattr(e, "key", None) == KEY and e.value == "LN4 7QP" for e in stored)
    written = _writes(events)
    assert written == ["[set]", "[set]"], written  # memory_set and its slot_set copy
    assert _writes([item["event"] for item in later.json()["events"]]) == written
    # Memory that is not pii is shown as stored.
    notes = [e for e in events if e["type"] == "memory_set" and e["key"].endswith("outage_note")]
    assert notes and notes[0]["value"].startswith("A fibre cable")


async def test_the_admin_view_of_the_log_is_not_masked(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        await s.client.post(f"{URL}/messages", json={"text": "LN4 7QP"}, headers=ALICE)
        admin = await s.client.get("/v1/admin/conversations/alice/c1/events", headers=ROOT_KEY)
    assert admin.status_code == 200, admin.text
    assert "LN4 7QP" in admin.text
