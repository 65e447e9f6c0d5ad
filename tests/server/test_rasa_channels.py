"""Rasa's channels against a real `keel run`: the REST webhook with Rasa's request shape and
without a key when the operator says so (loopback only), and the socket.io channel driven
by the `python-socketio` client with Rasa's events."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import socketio
import typer
from live_server import live_server
from server_kit import EXAMPLE

from keel.cli.run_cmd import build_settings
from keel.server.channel_auth import RASA_LOCAL_OWNER

KEY = "rasa-secret"
ADMIN = "rasa-admin"
OUTAGE = """\
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
"""
WAIT = 30.0
"""Seconds a test waits at most for an event (a bound for a broken server, not a measure)."""


@contextmanager
def keel(tmp_path: Path, *options: str) -> Iterator[str]:
    """`keel run` of the support example with `options`; yields the base URL."""
    script = tmp_path / "script.yml"
    script.write_text(OUTAGE, encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"web:chat:{KEY};ops:admin:{ADMIN}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        "KEEL_RATE_LIMIT": "off",
    }
    args = [str(EXAMPLE), "--model", f"scripted:{script}", *options]
    with live_server(args, env=env, cwd=tmp_path) as base:
        yield base


def _user_messages(base: str, owner: str, conversation: str) -> list[dict[str, Any]]:
    events = httpx.get(
        f"{base}/v1/admin/conversations/{owner}/{conversation}/events",
        headers={"Authorization": f"Bearer {ADMIN}"},
    ).json()["events"]
    return [e["event"] for e in events if e["event"]["type"] in ("user_message", "session_started")]


def test_rest_takes_rasas_request_shape_and_no_key_when_told(tmp_path: Path) -> None:
    rasa = {
        "sender": "rasa-7",
        "message": "my internet is down",
        "metadata": None,
        "input_channel": "rest",
    }
    with keel(tmp_path, "--rasa-no-key") as base:
        url = f"{base}/webhooks/rest/webhook"
        first = httpx.post(url, json=rasa)
        second = httpx.post(url, json={"sender": "rasa-7", "message": "LN4 7QP"})
        wrong_key = httpx.post(url, json=rasa, headers={"Authorization": "Bearer nope"})
        keyed = httpx.post(url, json={**rasa, "sender": "k-1"}, headers={"x-api-key": KEY})
        unknown = httpx.post(url, json={**rasa, "extra": 1})
        other_api = httpx.post(f"{base}/v1/conversations/c/messages", json={"text": "hi"})
        logged = _user_messages(base, RASA_LOCAL_OWNER, "rasa-7")
        keyed_log = _user_messages(base, "web", "k-1")
    assert first.status_code == 200, first.text
    messages = first.json()
    assert {m["recipient_id"] for m in messages} == {"rasa-7"}
    assert messages[0]["buttons"][0] == {
        "title": "My internet is down",
        "payload": "My internet is down",
    }
    assert messages[-1] == {
        "recipient_id": "rasa-7",
        "text": "What's the postcode where the internet is down?",
    }
    assert "known fault" in second.json()[0]["text"]
    assert [e["text"] for e in logged if e["type"] == "user_message"] == [
        "my internet is down",
        "LN4 7QP",
    ]
    assert wrong_key.status_code == 401 and keyed.status_code == 200 and keyed_log
    assert unknown.status_code == 422
    assert other_api.status_code == 401  # only Rasa's channels go without a key


def test_rest_needs_a_key_unless_told(tmp_path: Path) -> None:
    with keel(tmp_path) as base:
        refused = httpx.post(f"{base}/webhooks/rest/webhook", json={"sender": "a", "message": "hi"})
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "auth.missing_key"


def test_no_key_rasa_is_refused_on_a_public_address() -> None:
    options: dict[str, Any] = {"database_url": None, "model": None, "keys_file": None}
    env = {"KEEL_API_KEYS": f"web:chat:{KEY}"}
    local, _ = build_settings(
        EXAMPLE, host="127.0.0.1", env=env, cwd=Path("/srv"), rasa_no_key=True, **options
    )
    assert local.rasa_no_key
    with pytest.raises(typer.BadParameter, match="loopback address"):
        build_settings(
            EXAMPLE, host="0.0.0.0", env=env, cwd=Path("/srv"), rasa_no_key=True, **options
        )


class Listener:
    """A python-socketio client that queues what the server emits."""

    def __init__(self) -> None:
        self.client = socketio.AsyncClient(reconnection=False)
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        for name in ("session_confirm", "bot_uttered", "error"):
            self.client.on(name, self._queue(name))

    def _queue(self, name: str) -> Any:
        async def handler(data: Any) -> None:
            await self.events.put((name, data))

        return handler

    async def next(self) -> tuple[str, Any]:
        return await asyncio.wait_for(self.events.get(), WAIT)

    async def bot_messages_until(self, ending: str) -> list[dict[str, Any]]:
        """The `bot_uttered` payloads up to one whose text holds `ending`."""
        got: list[dict[str, Any]] = []
        while not got or ending not in got[-1].get("text", ""):
            name, data = await self.next()
            assert name == "bot_uttered", (name, data)
            got.append(data)
        return got


async def test_socketio_speaks_rasas_protocol(tmp_path: Path) -> None:
    with keel(tmp_path) as base:
        web = Listener()
        await web.client.connect(base, auth={"token": KEY}, socketio_path="socket.io")
        try:
            await web.client.emit("session_request", {"session_id": "web-1"})
            confirmed = await web.next()
            await web.client.emit(
                "user_uttered",
                {"message": "my internet is down", "session_id": "web-1", "metadata": {"a": 1}},
            )
            first = await web.bot_messages_until("postcode")
            await web.client.emit("user_uttered", {"message": "LN4 7QP"})  # the confirmed session
            second = await web.bot_messages_until("known fault")
            await web.client.emit("user_uttered", {"message": ""})
            invalid = await web.next()
            while invalid[0] == "bot_uttered":  # the rest of the second turn's messages
                second.append(invalid[1])
                invalid = await web.next()
        finally:
            await web.client.disconnect()
        stranger = socketio.AsyncClient(reconnection=False)
        with pytest.raises(socketio.exceptions.ConnectionError):
            await stranger.connect(base, socketio_path="socket.io")
        logged = _user_messages(base, "web", "web-1")
    assert confirmed == ("session_confirm", "web-1")
    greeting = first[0]
    assert greeting["text"].startswith("Hi, I'm Wren")
    assert greeting["buttons"][0] == {
        "title": "My internet is down",
        "payload": "My internet is down",
    }
    assert greeting["quick_replies"][0] == {
        "content_type": "text",
        "title": "My internet is down",
        "payload": "My internet is down",
    }
    assert first[-1] == {"text": "What's the postcode where the internet is down?"}
    assert any(m["text"].startswith("There is a known fault") for m in second)
    assert invalid[0] == "error" and invalid[1]["code"] == "request.invalid"
    assert [e["text"] for e in logged if e["type"] == "user_message"] == [
        "my internet is down",
        "LN4 7QP",
    ]


async def test_socketio_without_a_key_when_told(tmp_path: Path) -> None:
    with keel(tmp_path, "--rasa-no-key") as base:
        web = Listener()
        await web.client.connect(base, socketio_path="socket.io")
        try:
            await web.client.emit("session_request", None)
            name, session_id = await web.next()
            await web.client.emit("user_uttered", {"message": "my internet is down"})
            messages = await web.bot_messages_until("postcode")
        finally:
            await web.client.disconnect()
        logged = _user_messages(base, RASA_LOCAL_OWNER, session_id)
    assert name == "session_confirm" and len(session_id) >= 8
    assert messages[0]["text"].startswith("Hi, I'm Wren")
    assert [e["text"] for e in logged if e["type"] == "user_message"] == ["my internet is down"]
