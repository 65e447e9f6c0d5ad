"""Operators see failures: `keel run` logs a tool that raises at ERROR, with the
conversation id, the turn id and the traceback, in the server's own output; a turn the
engine could not even close is logged by the server with both ids too."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import httpx
import pytest
from live_server import live_server
from server_kit import ALICE, ServeFactory

from keel.events.model import TurnStarted

AGENT = Path(__file__).resolve().parent / "agents" / "failing"
KEY = "ops-secret"
SCRIPT = """\
- tool_calls: [{name: activate, arguments: {target_id: breaker}}]
- tool_calls: [{name: explode, arguments: {}}]
- That did not work.
"""


def test_a_tool_that_raises_is_in_the_server_log(tmp_path: Path) -> None:
    script = tmp_path / "script.yml"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"ops:chat,admin:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
    }
    args = [str(AGENT), "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        with httpx.Client(base_url=base, headers={"x-api-key": KEY}, timeout=30) as http:
            reply = http.post("/v1/conversations/ops-1/messages", json={"text": "break it"})
            answer = http.get("/v1/conversations/ops-1/events")
    assert answer.status_code == 200, answer.text
    events = answer.json()["events"]
    assert reply.status_code == 200, reply.text
    assert reply.json()["messages"][-1]["text"] == "That did not work."
    # The session start is a turn of its own; the message's turn is the last one.
    turn_id = [e["event"]["turn_id"] for e in events if e["event"]["type"] == "turn_started"][-1]
    (log,) = tmp_path.glob("server-*.log")
    lines = log.read_text().splitlines()
    (at,) = [n for n, line in enumerate(lines) if "tool explode raised" in line]
    assert "ERROR" in lines[at] and "keel.loop" in lines[at]
    assert "ops-1" in lines[at] and turn_id in lines[at]
    after = "\n".join(lines[at + 1 :])
    assert after.startswith("Traceback (most recent call last):")
    assert "RuntimeError: the breaker exploded" in after


async def test_a_turn_the_store_cannot_close_is_logged_by_the_server(
    serve: ServeFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with serve(["Hello."]) as s:
        started = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "/session_start"}, headers=ALICE
        )
        # From now on the database refuses every bot message, the error notice included.
        with sqlite3.connect(tmp_path / "keel.db") as connection:
            connection.execute(
                "CREATE TRIGGER no_replies BEFORE INSERT ON events "
                "WHEN NEW.kind = 'bot_message' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
            )
        with caplog.at_level(logging.ERROR, logger="keel"):
            failed = await s.client.post(
                "/v1/conversations/c1/messages", json={"text": "hello"}, headers=ALICE
            )
        stored = [e.event for e in await s.store.read("alice/c1")]
    assert started.status_code == 200
    assert failed.status_code == 500 and failed.json()["error"]["code"] == "turn.failed"
    turn = [e.turn_id for e in stored if isinstance(e, TurnStarted)][-1]
    errors = [(r.name, r.getMessage()) for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        ("keel.loop", f"event store failed (conversation alice/c1, turn {turn})"),
        ("keel.server", f"turn failed (conversation alice/c1, turn {turn})"),
    ]
    assert all(r.exc_info is not None for r in caplog.records if r.levelno == logging.ERROR)
    assert "disk on fire" in caplog.text
