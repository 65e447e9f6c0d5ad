"""The Inspector's admin endpoints: any key's events, state at a seq, and the live stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from server_kit import (
    ACTIVATE_OUTAGE,
    ALICE,
    BOB,
    ROOT_KEY,
    SET_POSTCODE,
    GatedModel,
    Served,
    ServeFactory,
)

from keel.events.model import BotMessage
from keel.server import inspector

BASE = "/v1/admin/conversations/alice/c1"
Frames = list[tuple[int | None, str, dict[str, Any]]]


async def _two_turns(s: Served) -> int:
    """alice/c1: the outage report, then the postcode; the log's last seq."""
    for text in ("my internet is down", "LN4 7QP"):
        answer = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": text}, headers=ALICE
        )
        assert answer.status_code == 200
    return int(answer.json()["last_seq"])


def _bot(text: str) -> BotMessage:
    return BotMessage(text=text, response_source="verbatim")


def _seq_of(events: list[dict[str, Any]], kind: str, **fields: object) -> int:
    for item in events:
        event = item["event"]
        if event["type"] == kind and all(event.get(k) == v for k, v in fields.items()):
            return int(item["seq"])
    raise AssertionError(f"no {kind} {fields} in the log")


async def test_events_are_the_chat_apis_events_for_any_owner(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        last = await _two_turns(s)
        own = (await s.client.get("/v1/conversations/c1/events", headers=ALICE)).json()
        admin = await s.client.get(f"{BASE}/events", headers=ROOT_KEY)
        later = await s.client.get(f"{BASE}/events?after=50&limit=3", headers=ROOT_KEY)
    assert admin.status_code == 200
    # The same log, except that only the admin view shows the prompts the model was sent
    # and the pii memory unmasked.
    calls = [e["event"]["metadata"] for e in own["events"] if e["event"]["type"] == "model_called"]
    assert calls and all("request" not in meta and "reply" in meta for meta in calls)
    stripped = [
        {
            **e,
            "event": {
                **e["event"],
                **_masked(e["event"]),
                "metadata": {k: v for k, v in e["event"]["metadata"].items() if k != "request"},
            },
        }
        for e in admin.json()["events"]
    ]
    assert stripped != admin.json()["events"]
    assert {**admin.json(), "events": stripped} == own
    assert admin.json()["last_seq"] == last
    assert [e["seq"] for e in later.json()["events"]] == [51, 52, 53]
    assert later.json()["last_seq"] == last


def _masked(event: dict[str, object]) -> dict[str, object]:
    """The pii postcode's writes as the chat view shows them."""
    key = event.get("key", event.get("name"))
    if event["type"] in ("memory_set", "slot_set") and key == "report_outage.postcode":
        return {"value": "[set]"}
    return {}


async def test_model_called_records_the_request_it_sent(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        await _two_turns(s)
        events = (await s.client.get(f"{BASE}/events", headers=ROOT_KEY)).json()["events"]
    calls = [e["event"] for e in events if e["event"]["type"] == "model_called"]
    assert len(calls) == 2
    first = calls[0]["metadata"]["request"]
    # The system prompt, the session's greeting, the message, the prompt's volatile part.
    assert [m["role"] for m in first["messages"]] == ["system", "assistant", "user", "system"]
    assert "## Now" in first["messages"][-1]["content"]
    assert "Brightwave" in first["messages"][0]["content"]
    assert first["messages"][1]["content"].startswith("Hi, I'm Wren")
    assert first["messages"][2] == {"role": "user", "content": "my internet is down"}
    assert "activate" in first["tools"]
    second = calls[1]["metadata"]["request"]
    assert second["messages"][-2] == {"role": "user", "content": "LN4 7QP"}
    assert {"role": "user", "content": "my internet is down"} in second["messages"]
    assert calls[1]["metadata"]["reply"]["tool_calls"][0]["function"]["name"] == "set_fields"


async def test_state_at_an_earlier_seq_is_the_fold_up_to_it(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        last = await _two_turns(s)
        events = (await s.client.get(f"{BASE}/events", headers=ROOT_KEY)).json()["events"]
        postcode = _seq_of(events, "memory_set", key="report_outage.postcode")
        activated = _seq_of(events, "skill_activated", skill_id="report_outage")
        latest = (await s.client.get(f"{BASE}/state", headers=ROOT_KEY)).json()
        at_end = (await s.client.get(f"{BASE}/state?seq={last}", headers=ROOT_KEY)).json()
        before = (await s.client.get(f"{BASE}/state?seq={postcode - 1}", headers=ROOT_KEY)).json()
        at_set = (await s.client.get(f"{BASE}/state?seq={postcode}", headers=ROOT_KEY)).json()
        active = (await s.client.get(f"{BASE}/state?seq={activated}", headers=ROOT_KEY)).json()
        empty = (await s.client.get(f"{BASE}/state?seq=0", headers=ROOT_KEY)).json()
        view = (await s.client.get("/v1/conversations/c1", headers=ALICE)).json()
    assert latest == at_end
    assert latest["seq"] == latest["last_seq"] == last
    assert latest["owner"] == "alice" and latest["conversation_id"] == "c1"
    for field in ("active_skill", "stack", "memory", "pending_confirmation", "turn_count"):
        assert latest[field] == view[field], field
    assert latest["status"] == view["state"] == "idle"
    assert latest["memory"]["report_outage.postcode"] == "[set]"  # pii stays masked
    assert "report_outage.postcode" not in before["memory"]
    assert at_set["memory"]["report_outage.postcode"] == "[set]"
    assert (before["seq"], before["last_seq"], before["status"]) == (postcode - 1, last, "running")
    assert active["active_skill"] is None  # the stack changes in the next event
    assert before["active_skill"] == "report_outage"
    assert [f["skill_id"] for f in before["stack"]] == ["report_outage", "report_outage"]
    assert set(before["stack"][0]) == {"frame_id", "skill_id", "type", "block_id", "step_id"}
    assert (empty["seq"], empty["memory"], empty["stack"], empty["turn_count"]) == (0, {}, [], 0)


async def test_a_bad_seq_is_refused_with_422(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        last = await _two_turns(s)
        past = await s.client.get(f"{BASE}/state?seq={last + 1}", headers=ROOT_KEY)
        negative = await s.client.get(f"{BASE}/state?seq=-1", headers=ROOT_KEY)
        text = await s.client.get(f"{BASE}/state?seq=first", headers=ROOT_KEY)
        bad_after = await s.client.get(f"{BASE}/events?after=-2", headers=ROOT_KEY)
        bad_resume = await s.client.get(
            f"{BASE}/stream", headers={**ROOT_KEY, "Last-Event-ID": "twelve"}
        )
    assert past.status_code == 422
    assert past.json()["error"]["code"] == "conversation.seq_out_of_range"
    for answer in (negative, text, bad_after, bad_resume):
        assert answer.status_code == 422
        assert answer.json()["error"]["code"] == "request.invalid"


@pytest.mark.parametrize("path", ["events", "state", "stream"])
async def test_the_admin_scope_is_required(serve: ServeFactory, path: str) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
        chat = await s.client.get(f"{BASE}/{path}", headers=ALICE)
        nobody = await s.client.get(f"{BASE}/{path}")
        wrong = await s.client.get(f"{BASE}/{path}", headers={"x-api-key": "nope"})
    assert chat.status_code == 403 and chat.json()["error"]["code"] == "auth.scope"
    assert nobody.status_code == 401 and nobody.json()["error"]["code"] == "auth.missing_key"
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "auth.invalid_key"


@pytest.mark.parametrize("path", ["events", "state", "stream"])
async def test_unknown_conversations_are_404_and_bad_owners_422(
    serve: ServeFactory, path: str
) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
        other_owner = await s.client.get(f"/v1/admin/conversations/bob/c1/{path}", headers=ROOT_KEY)
        other_id = await s.client.get(f"/v1/admin/conversations/alice/c2/{path}", headers=ROOT_KEY)
        bad_owner = await s.client.get(f"/v1/admin/conversations/a%20b/c1/{path}", headers=ROOT_KEY)
    for answer in (other_owner, other_id):
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "conversation.not_found"
    assert bad_owner.status_code == 422


async def test_a_log_written_outside_the_server_has_the_owner_tilde(serve: ServeFactory) -> None:
    async with serve() as s:
        await s.store.append("outside-1", 0, [_bot("hello")])
        listed = (await s.client.get("/v1/admin/conversations", headers=ROOT_KEY)).json()
        events = await s.client.get("/v1/admin/conversations/~/outside-1/events", headers=ROOT_KEY)
        state = await s.client.get("/v1/admin/conversations/~/outside-1/state", headers=ROOT_KEY)
    assert listed["conversations"][0]["owner"] is None
    assert [e["event"]["text"] for e in events.json()["events"]] == ["hello"]
    assert (state.json()["owner"], state.json()["seq"]) == (None, 1)


# --- the stream --------------------------------------------------------------------------


class AsgiStream:
    """A GET to the app at the ASGI level, read chunk by chunk, that can disconnect.

    Special because httpx's ASGI transport hands over a streamed body only once it ends,
    and the admin stream never ends by itself.
    """

    def __init__(self, app: FastAPI, path: str, headers: dict[str, str], query: str = "") -> None:
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.frames: Frames = []
        self.comments: list[str] = []
        self._chunks: asyncio.Queue[str] = asyncio.Queue()
        self._text = ""
        self._asked = False
        self._left = asyncio.Event()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("keel.test", 80),
        }
        self.task = asyncio.ensure_future(app(scope, self._receive, self._send))

    async def _receive(self) -> dict[str, object]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self._left.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            self._chunks.put_nowait(message.get("body", b"").decode())

    async def until(self, done: Callable[[AsgiStream], bool]) -> Frames:
        """Read until `done(self)` holds; the frames read so far."""
        while not done(self):
            self._text += await self._chunks.get()
            *blocks, self._text = self._text.split("\n\n")
            for block in blocks:
                self._take(block)
        return self.frames

    def _take(self, block: str) -> None:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                self.comments.append(line)
            name, _, value = line.partition(": ")
            fields[name] = value
        if "event" in fields:
            ident = int(fields["id"]) if "id" in fields else None
            self.frames.append((ident, fields["event"], json.loads(fields["data"])))

    def seqs(self) -> list[int]:
        """The seq of every frame read."""
        return [int(data["seq"]) for _, _, data in self.frames]

    async def leave(self) -> None:
        """Disconnect; returns once the app has finished the request."""
        self._left.set()
        await self.task


def _reached(seq: int) -> Callable[[AsgiStream], bool]:
    return lambda stream: bool(stream.frames) and stream.seqs()[-1] >= seq


async def test_the_stream_replays_the_log_then_delivers_a_new_turn(
    serve: ServeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No polling: the new turn must arrive through the run registry and the feed.
    monkeypatch.setattr(inspector, "POLL_SECONDS", 3600.0)
    async with asyncio.timeout(20), serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        first = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        replayed_to = int(first.json()["last_seq"])
        stream = AsgiStream(s.app, f"{BASE}/stream", ROOT_KEY)
        await stream.until(_reached(replayed_to))
        second = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "LN4 7QP"}, headers=ALICE
        )
        last = int(second.json()["last_seq"])
        frames = await stream.until(_reached(last))
        await stream.leave()
        logged = (await s.client.get(f"{BASE}/events", headers=ROOT_KEY)).json()["events"]
    assert stream.status == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert stream.seqs() == list(range(1, last + 1))
    assert all(name == "logged" and ident == data["seq"] for ident, name, data in frames)
    assert [data for _, _, data in frames] == logged
    users = [d["event"]["text"] for _, _, d in frames if d["event"]["type"] == "user_message"]
    assert users == ["my internet is down", "LN4 7QP"]


async def test_the_stream_shows_a_running_turns_events_as_they_are_appended(
    serve: ServeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspector, "POLL_SECONDS", 3600.0)
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(20), serve(model=model) as s:
        await s.store.append("alice/c1", 0, [_bot("earlier")])
        stream = AsgiStream(s.app, f"{BASE}/stream", {**ROOT_KEY, "Last-Event-ID": "1"})
        turn = asyncio.ensure_future(
            s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
        )
        await model.called.wait()

        def saw_user(stream: AsgiStream) -> bool:
            return any(d["event"]["type"] == "user_message" for _, _, d in stream.frames)

        await stream.until(saw_user)  # while the model is still held
        held = [d["event"]["type"] for _, _, d in stream.frames]
        model.gate.set()
        last = int((await turn).json()["last_seq"])
        await stream.until(_reached(last))
        await stream.leave()
    assert stream.seqs() == list(range(2, last + 1))  # resumed after Last-Event-ID
    assert "model_called" not in held and "turn_started" in held
    assert stream.frames[-1][2]["event"]["type"] == "bot_turn_ended"


async def test_the_stream_picks_up_events_appended_elsewhere_and_keeps_alive(
    serve: ServeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another worker process appending is only seen by polling the store.
    monkeypatch.setattr(inspector, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(inspector, "KEEP_ALIVE_SECONDS", 0.0)
    async with asyncio.timeout(20), serve() as s:
        await s.store.append("alice/c1", 0, [_bot("one")])
        stream = AsgiStream(s.app, f"{BASE}/stream", ROOT_KEY, query="after=0")
        await stream.until(_reached(1))
        await s.store.append("alice/c1", 1, [_bot("two"), _bot("three")])
        await stream.until(_reached(3))
        await stream.until(lambda st: bool(st.comments))
        await stream.leave()
    assert [d["event"]["text"] for _, _, d in stream.frames] == ["one", "two", "three"]
    assert stream.comments[0] == ": keep-alive"


async def test_the_stream_ends_when_the_client_leaves(
    serve: ServeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspector, "POLL_SECONDS", 3600.0)
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(20), serve(model=model) as s:
        turn = asyncio.ensure_future(
            s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
        )
        await model.called.wait()
        stream = AsgiStream(s.app, f"{BASE}/stream", ROOT_KEY)
        await stream.until(lambda st: bool(st.frames))
        await stream.leave()  # returns only once the request has finished
        run = s.runtime.runs.active("alice/c1")
        still_running = run is not None and not run.done
        model.gate.set()
        answer = await turn
    assert stream.task.done() and stream.task.exception() is None
    assert still_running  # leaving the admin stream does not cancel the turn
    assert answer.json()["stop_reason"] == "end_turn"


async def test_another_keys_conversation_is_not_streamed(serve: ServeFactory) -> None:
    async with asyncio.timeout(20), serve([ACTIVATE_OUTAGE, ACTIVATE_OUTAGE]) as s:
        await s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=BOB)
        missing = await s.client.get(f"{BASE}/stream", headers=ROOT_KEY)
    assert missing.status_code == 404
