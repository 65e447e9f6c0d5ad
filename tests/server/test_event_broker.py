"""`event_broker: {type: pika}` in endpoints.yml publishes every committed event to the real
RabbitMQ (127.0.0.1:5672, guest/guest; `KEEL_TEST_RABBITMQ_HOST` / `_PORT` elsewhere):
all of them, each conversation's in log order, with its seq; and a broker that is down
fails no turn (events that do not fit the queue are dropped and counted).

Skipped when RabbitMQ cannot be reached, unless `KEEL_REQUIRE_RABBITMQ=1` (set by
.ci/run, which starts RabbitMQ when it is down) makes that a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aio_pika
import httpx
import pytest
from live_server import free_port, live_server
from server_kit import ALICE, BOB, serving

from keel.testing.scripted import ScriptedModel

AGENT = Path(__file__).resolve().parent / "agents" / "broadcast"
HOST = os.environ.get("KEEL_TEST_RABBITMQ_HOST", "127.0.0.1")
PORT = int(os.environ.get("KEEL_TEST_RABBITMQ_PORT", "5672"))
REQUIRE_RABBITMQ = os.environ.get("KEEL_REQUIRE_RABBITMQ") == "1"
KEY = "ops-secret"


async def _reachable() -> None:
    connection = await aio_pika.connect(
        host=HOST, port=PORT, login="guest", password="guest", timeout=5
    )
    await connection.close()


@pytest.fixture
def rabbitmq() -> Iterator[dict[str, str]]:
    """The broker's settings for the agent's endpoints.yml, with a fresh queue and
    exchange (deleted afterwards); skips (or fails, under KEEL_REQUIRE_RABBITMQ=1) when
    RabbitMQ is not reachable."""
    try:
        asyncio.run(_reachable())
    except Exception as exc:
        reason = f"RabbitMQ not reachable at {HOST}:{PORT} ({type(exc).__name__}: {exc})"
        if REQUIRE_RABBITMQ:
            pytest.fail(f"{reason}; KEEL_REQUIRE_RABBITMQ=1 makes it mandatory")
        pytest.skip(reason)
    name = f"keel-test-{uuid.uuid4().hex[:12]}"
    settings = {
        "BROKER_HOST": HOST,
        "BROKER_PORT": str(PORT),
        "BROKER_PASSWORD": "guest",
        "BROKER_QUEUE": name,
        "BROKER_EXCHANGE": f"{name}-exchange",
        "BROKER_QUEUE_SIZE": "10000",
    }
    try:
        yield settings
    finally:
        asyncio.run(_delete(name, f"{name}-exchange"))


async def _delete(queue: str, exchange: str) -> None:
    connection = await aio_pika.connect(host=HOST, port=PORT, timeout=5)
    async with connection:
        channel = await connection.channel()
        await channel.queue_delete(queue)
        await channel.exchange_delete(exchange)


async def _drain(queue_name: str) -> list[tuple[dict[str, Any], aio_pika.abc.AbstractMessage]]:
    """Every message in the queue now, in queue order (acknowledged)."""
    connection = await aio_pika.connect(host=HOST, port=PORT, timeout=5)
    got: list[tuple[dict[str, Any], aio_pika.abc.AbstractMessage]] = []
    async with connection:
        channel = await connection.channel()
        queue = await channel.declare_queue(queue_name, durable=True, passive=True)
        while (message := await queue.get(fail=False, timeout=5)) is not None:
            await message.ack()
            got.append((json.loads(message.body), message))
    return got


def test_every_committed_event_reaches_rabbitmq_in_order_with_its_seq(
    tmp_path: Path, rabbitmq: dict[str, str]
) -> None:
    conversations = ["c1", "c2", "c3"]
    script = tmp_path / "script.yml"
    script.write_text("".join(f"- Answer {n}.\n" for n in range(9)), encoding="utf-8")
    env = {
        **rabbitmq,
        "KEEL_API_KEYS": f"ops:chat,admin:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
    }
    logged: dict[str, list[dict[str, Any]]] = {}
    with live_server([str(AGENT), "--model", f"scripted:{script}"], env=env, cwd=tmp_path) as base:
        with httpx.Client(base_url=base, headers={"x-api-key": KEY}, timeout=30) as http:
            for round_ in range(3):  # interleaved: c1, c2, c3, c1, ...
                for conversation in conversations:
                    reply = http.post(
                        f"/v1/conversations/{conversation}/messages",
                        json={"text": f"message {round_}"},
                    )
                    assert reply.status_code == 200, reply.text
            for conversation in conversations:
                events = http.get(f"/v1/conversations/{conversation}/events").json()["events"]
                logged[f"ops/{conversation}"] = events
    # The server has stopped: its shutdown flushed the queue.
    (log,) = tmp_path.glob("server-*.log")
    messages = asyncio.run(_drain(rabbitmq["BROKER_QUEUE"]))
    assert len(messages) == sum(len(events) for events in logged.values()), log.read_text()
    by_conversation: dict[str, list[dict[str, Any]]] = {}
    for body, message in messages:
        key = body["conversation_id"]
        assert message.message_id == f"{key}:{body['seq']}"
        assert message.headers["keel-seq"] == body["seq"]
        assert message.headers["keel-conversation-id"] == key
        assert message.content_type == "application/json"
        assert message.delivery_mode == aio_pika.DeliveryMode.PERSISTENT
        by_conversation.setdefault(key, []).append(body)
    assert sorted(by_conversation) == sorted(logged)
    for key, bodies in by_conversation.items():
        events = logged[key]
        # Complete and in log order: seqs 1..N as the store numbered them, the same events.
        assert [b["seq"] for b in bodies] == [e["seq"] for e in events]
        assert [b["keel_event"] for b in bodies] == [e["event"] for e in events]
        assert all(b["sender_id"] == key.removeprefix("ops/") for b in bodies)
        assert all(b["owner"] == "ops" and b["agent_id"] == "broadcast" for b in bodies)
        users = [b for b in bodies if b["event"] == "user"]
        assert [u["text"] for u in users] == ["message 0", "message 1", "message 2"]
        bots = [b for b in bodies if b["event"] == "bot"]
        assert bots and all(b["text"].startswith("Answer ") for b in bots)
        assert all(b["timestamp"] == b["keel_event"]["timestamp"] for b in bodies)


@asynccontextmanager
async def _served(tmp_path: Path, replies: list[str]) -> AsyncIterator[Any]:
    async with serving(tmp_path, ScriptedModel(replies), project=AGENT) as served:
        yield served


async def test_a_broker_that_is_down_fails_no_turn_and_the_drops_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    nobody = free_port()  # nothing listens there
    for name, value in {
        "BROKER_HOST": "127.0.0.1",
        "BROKER_PORT": str(nobody),
        "BROKER_PASSWORD": "guest",
        "BROKER_QUEUE": "unused",
        "BROKER_EXCHANGE": "unused",
        "BROKER_QUEUE_SIZE": "5",
    }.items():
        monkeypatch.setenv(name, value)
    replies = [f"Answer {n}." for n in range(4)]
    caplog.set_level("INFO", logger="keel.broker")
    async with _served(tmp_path, replies) as s:
        broker = s.runtime.broker
        assert broker is not None and broker.capacity == 5
        answers = []
        for headers in (ALICE, BOB, ALICE, BOB):
            reply = await s.client.post(
                "/v1/conversations/c1/messages", json={"text": "hello"}, headers=headers
            )
            assert reply.status_code == 200, reply.text
            answers.append(reply.json()["messages"][-1]["text"])
        committed = len(await s.store.read("alice/c1")) + len(await s.store.read("bob/c1"))
        # The background task tried, failed and counted it; the turns did not wait for it.
        stats = await asyncio.wait_for(broker.until(lambda st: st.failures >= 1), 30)
        assert stats.published == 0
        assert stats.waiting == 5 and stats.dropped == committed - 5
    assert answers == replies
    assert stats.failures >= 1
    text = caplog.text
    assert "event broker queue full" in text
    assert f"event broker amqp 127.0.0.1:{nobody} exchange 'unused' failed" in text
    assert f"0 published, {committed - 5} dropped" in text and "5 unpublished" in text


def test_an_agent_without_a_broker_has_none(tmp_path: Path) -> None:
    async def check() -> None:
        async with serving(tmp_path, ScriptedModel([])) as s:
            assert s.runtime.broker is None

    asyncio.run(check())


def test_rabbitmq_is_started_by_ci() -> None:
    """`.ci/run` starts RabbitMQ when it is down and makes this suite require it."""
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "KEEL_REQUIRE_RABBITMQ=1" in ci
    result = subprocess.run(["bash", "-n", str(Path(__file__).parents[2] / ".ci" / "run")])
    assert result.returncode == 0
