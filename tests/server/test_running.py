"""A turn that is still running: the busy policy, cancellation, clients that leave."""

from __future__ import annotations

import asyncio
import json

from server_kit import ACTIVATE_OUTAGE, ALICE, BOB, GatedModel, ServeFactory, parse_sse

from keel.events.model import TurnEnded
from keel.server.runs import TurnRun

URL = "/v1/conversations/c1"
SSE = {**ALICE, "accept": "text/event-stream"}


async def _stop_reasons(served: object, key: str) -> list[str]:
    store = served.store  # type: ignore[attr-defined]
    return [s.event.stop_reason for s in await store.read(key) if isinstance(s.event, TurnEnded)]


async def test_a_second_message_while_a_turn_runs_gets_409(serve: ServeFactory) -> None:
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(10), serve(model=model) as s:
        first = asyncio.ensure_future(
            s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        )
        await model.called.wait()
        busy = await s.client.post(f"{URL}/messages", json={"text": "again"}, headers=ALICE)
        webhook = await s.client.post(
            "/webhooks/rest/webhook", json={"sender": "c1", "message": "again"}, headers=ALICE
        )
        view = (await s.client.get(URL, headers=ALICE)).json()
        other_key = await s.client.post(
            f"{URL}/messages", json={"text": "/session_start"}, headers=BOB
        )
        model.gate.set()
        done = await first
    for r in (busy, webhook):
        assert r.status_code == 409
        assert r.json()["error"]["code"] == "conversation.busy"
        assert r.headers["retry-after"] == "1"
    assert view["running"] is True and view["state"] == "running"
    assert other_key.status_code == 200  # bob's c1 is another conversation
    assert done.status_code == 200 and done.json()["stop_reason"] == "end_turn"


async def test_cancel_stops_the_running_turn_and_records_it(serve: ServeFactory) -> None:
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(10), serve(model=model) as s:
        first = asyncio.ensure_future(
            s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        )
        await model.called.wait()
        cancelled = await s.client.post(f"{URL}/cancel", headers=ALICE)
        answer = await first
        again = await s.client.post(f"{URL}/cancel", headers=ALICE)
        reasons = await _stop_reasons(s, "alice/c1")
    assert cancelled.status_code == 200
    assert cancelled.json() == {
        "conversation_id": "c1",
        "cancelled": True,
        "stop_reason": "cancelled",
        "state": "idle",
    }
    assert answer.status_code == 200 and answer.json()["stop_reason"] == "cancelled"
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conversation.not_running"
    assert reasons[-1] == "cancelled"


async def test_a_client_that_leaves_an_sse_stream_cancels_the_turn(serve: ServeFactory) -> None:
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(10), serve(model=model) as s:
        left = asyncio.Event()
        sent: list[dict[str, object]] = []
        request = _asgi_request(f"{URL}/messages", {"text": "down"}, SSE)

        async def receive() -> dict[str, object]:
            if request:
                return request.pop()
            await left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        call = asyncio.ensure_future(s.app(_scope(f"{URL}/messages", SSE), receive, send))
        await model.called.wait()
        run = s.runtime.runs.active("alice/c1")
        assert isinstance(run, TurnRun)
        left.set()
        await call
        outcome = await run.wait()
        reasons = await _stop_reasons(s, "alice/c1")
        assert s.runtime.runs.active("alice/c1") is None
    assert sent[0]["status"] == 200
    assert outcome.cancelled and outcome.stop_reason == "cancelled"
    assert reasons[-1] == "cancelled"


async def test_reconnecting_follows_a_running_turn_to_its_end(serve: ServeFactory) -> None:
    model = GatedModel([ACTIVATE_OUTAGE])
    async with asyncio.timeout(10), serve(model=model) as s:
        first = asyncio.ensure_future(
            s.client.post(f"{URL}/messages", json={"text": "down"}, headers=ALICE)
        )
        await model.called.wait()
        seen = await s.store.last_seq("alice/c1")
        follow = asyncio.ensure_future(
            s.client.get(f"{URL}/stream", headers={**SSE, "Last-Event-ID": str(seen)})
        )
        run = s.runtime.runs.active("alice/c1")
        assert run is not None
        await run.feed.until_followed(1)
        model.gate.set()
        answer, followed = await asyncio.gather(first, follow)
    frames = parse_sse(followed.text)
    ids = [ident for ident, _, _ in frames if ident is not None]
    assert ids == sorted(set(ids)) and all(i > seen for i in ids)
    texts = [data["text"] for _, name, data in frames if name == "bot_message"]
    assert texts == [m["text"] for m in answer.json()["messages"] if m["seq"] > seen]
    assert frames[-1][1] == "done" and frames[-1][2]["stop_reason"] == "end_turn"


def _scope(path: str, headers: dict[str, str]) -> dict[str, object]:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw.append((b"content-type", b"application/json"))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("keel.test", 80),
    }


def _asgi_request(
    path: str, body: dict[str, object], headers: dict[str, str]
) -> list[dict[str, object]]:
    return [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]
