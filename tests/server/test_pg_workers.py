"""Three workers on one PostgreSQL schema under concurrent load (issue 5 acceptance).

`keel run --workers 3` serves the example agent with a scripted model that answers every
message with "ok" (zero latency; each worker reads the script for itself). 50
conversations send 10 messages each, one after another per conversation, all
conversations at once (at most 25 requests in flight); in the middle of that, 10 messages
go to one conversation at the same moment. Afterwards every log is read back: gap-free
sequence numbers, whole turns one after another (no interleaving), every user message
exactly once (and in order where the client sent them in order), one answer per message.

Busy answers: a message that reaches the worker already running that conversation's turn
gets 409 `conversation.busy` and is neither stored nor queued (docs/api.md); the client
retries it. A message that reaches another worker waits for the PostgreSQL advisory lock.
Both paths are counted; neither may lose or duplicate a message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from live_server import live_server, postgres_schema
from log_checks import Event, assert_consistent, of_type
from server_kit import EXAMPLE

KEY = "load-secret"
CONVERSATIONS = 50
MESSAGES = 10
SHARED = 10
IN_FLIGHT = 25
SHARED_AFTER = 100
"""The shared burst starts once this many load messages were answered (mid-load)."""
RETRIES = 400
LIMIT = 90.0
"""Seconds the load may take at most (it takes about 15 on two cores)."""


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL schema (skipped with a reason when PostgreSQL is unreachable)."""
    with postgres_schema() as url:
        yield url


@dataclass
class Load:
    """What the clients saw."""

    answered: int = 0
    busy: int = 0
    replies: dict[str, list[str]] = field(default_factory=dict)
    """Per message text, the bot texts of its (accepted) answer."""
    mid_load: asyncio.Event = field(default_factory=asyncio.Event)


async def send(client: httpx.AsyncClient, load: Load, conversation: str, text: str) -> None:
    """Send one message; retry it while the conversation is busy (409)."""
    for attempt in range(RETRIES):
        reply = await client.post(f"/v1/conversations/{conversation}/messages", json={"text": text})
        if reply.status_code == 200:
            body = reply.json()
            assert body["stop_reason"] == "end_turn", body
            load.replies[text] = [m["text"] for m in body["messages"]]
            load.answered += 1
            if load.answered >= SHARED_AFTER:
                load.mid_load.set()
            return
        assert reply.status_code == 409, reply.text
        assert reply.json()["error"]["code"] == "conversation.busy"
        assert reply.headers["retry-after"] == "1"
        load.busy += 1
        await asyncio.sleep(0.01 * min(attempt + 1, 10))  # back off before retrying
    raise AssertionError(f"{conversation}: {text!r} was refused {RETRIES} times")


async def drive(base: str) -> tuple[Load, dict[str, list[Event]]]:
    """Run the load, then read every log."""
    load = Load()
    gate = asyncio.Semaphore(IN_FLIGHT)
    limits = httpx.Limits(max_connections=IN_FLIGHT + SHARED)
    headers = {"x-api-key": KEY}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:

        async def conversation(n: int) -> None:
            for m in range(MESSAGES):
                async with gate:
                    await send(client, load, f"load-{n}", f"load-{n} message {m}")

        async def burst() -> None:
            await load.mid_load.wait()
            shared = [send(client, load, "shared", f"shared message {i}") for i in range(SHARED)]
            await asyncio.gather(*shared)

        await asyncio.gather(burst(), *(conversation(n) for n in range(CONVERSATIONS)))
        names = [f"load-{n}" for n in range(CONVERSATIONS)] + ["shared"]
        logs = {name: await _log(client, name) for name in names}
    return load, logs


async def _log(client: httpx.AsyncClient, name: str) -> list[Event]:
    reply = await client.get(f"/v1/conversations/{name}/events", params={"limit": 10_000})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    events: list[Event] = body["events"]
    assert body["last_seq"] == len(events), f"{name}: last_seq {body['last_seq']}"
    return events


async def test_three_workers_on_postgresql_keep_every_log_whole(
    tmp_path: Path, postgres_url: str
) -> None:
    script = tmp_path / "ok.json"
    total = CONVERSATIONS * MESSAGES + SHARED
    # Each worker answers from its own copy of the script, so each copy covers every message.
    script.write_text(json.dumps(["ok"] * (total + 10)), encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"load:chat:{KEY}",
        "KEEL_DATABASE_URL": postgres_url,
        "KEEL_RATE_LIMIT": "off",
    }
    args = [str(EXAMPLE), "--workers", "3", "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        async with asyncio.timeout(LIMIT):
            load, logs = await drive(base)
    assert load.answered == total
    for name, events in logs.items():
        assert_consistent(events, name)
        ends = {e["stop_reason"] for e in of_type(events, "turn_ended")}
        assert ends == {"end_turn"}, f"{name}: turns ended {ends}"
    for n in range(CONVERSATIONS):
        users = [e["text"] for e in of_type(logs[f"load-{n}"], "user_message")]
        assert users == [f"load-{n} message {m}" for m in range(MESSAGES)]
    shared = [e["text"] for e in of_type(logs["shared"], "user_message")]
    assert sorted(shared) == sorted(f"shared message {i}" for i in range(SHARED))
    for name, events in logs.items():
        # One greeting (the session start), then one "ok" per message, nothing lost.
        bots = [e["text"] for e in of_type(events, "bot_message")]
        assert bots[0].startswith("Hi, I'm Wren") and bots[1:] == ["ok"] * (len(bots) - 1)
        assert len(bots) - 1 == len(of_type(events, "user_message")), name
    assert all(texts[-1] == "ok" for texts in load.replies.values())
    print(f"409 busy answers retried: {load.busy}")
