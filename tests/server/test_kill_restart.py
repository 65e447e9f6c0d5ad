"""A `keel run` process SIGKILLed mid-turn leaves its conversation consistent (issue 5 item 6).

Each test drives the `crashy` agent (tests/server/agents/crashy) over HTTP into a tool
call or a model call, kills the server with SIGKILL, starts it again on the same database
and checks: the events committed before the kill are kept as they were, the interrupted
tool is not recorded as run (and not run again), the open turn is closed as `cancelled` by
the next request, a pending pause is still pending (then approved exactly once), and the
conversation goes on. On SQLite and on PostgreSQL (skipped with a reason when it cannot be
reached, mandatory with `KEEL_REQUIRE_POSTGRES=1`).

No test sleeps for state: the tool's marker files, the model server's arrival event and
`/health` are polled a bounded number of times.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from crash_kit import (
    CRASHY,
    HeldModel,
    KeelProcess,
    file_appears,
    held_model_server,
    keel_process,
    lines,
)
from live_server import postgres_schema
from log_checks import Event, assert_consistent, of_type

KEY = "crash-secret"
URL = "/v1/conversations/c1"
LIMIT = 60.0
"""Seconds one test may take at most."""


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A SQLite file, or a fresh PostgreSQL schema (dropped afterwards)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'crash.db'}"
        return
    with postgres_schema() as url:
        yield url


@dataclass(kw_only=True)
class Crashy:
    """The crashy agent served by a killable process, its model server and its files."""

    server: KeelProcess
    model: HeldModel
    files: Path

    def client(self) -> httpx.AsyncClient:
        """A client for the current process (a new one after each restart)."""
        headers = {"x-api-key": KEY}
        return httpx.AsyncClient(base_url=self.server.base, headers=headers, timeout=30)

    async def log(self) -> list[Event]:
        """The conversation's whole log, as GET /events answers it."""
        async with self.client() as client:
            reply = await client.get(f"{URL}/events", params={"limit": 10_000})
        assert reply.status_code == 200, reply.text
        events: list[Event] = reply.json()["events"]
        return events

    async def send(self, text: str) -> httpx.Response:
        """POST one message and wait for the answer."""
        async with self.client() as client:
            return await client.post(f"{URL}/messages", json={"text": text})

    async def approve(self, pause_id: str) -> httpx.Response:
        """POST an approval and wait for the answer."""
        async with self.client() as client:
            return await client.post(f"{URL}/approvals/{pause_id}", json={"approved": True})

    async def view(self) -> dict[str, Any]:
        """GET the conversation."""
        async with self.client() as client:
            reply = await client.get(URL)
        assert reply.status_code == 200, reply.text
        view: dict[str, Any] = reply.json()
        return view

    async def kill_during(self, request: asyncio.Task[httpx.Response]) -> None:
        """SIGKILL the server while `request` waits for it; the request fails in transit."""
        self.server.kill()
        with pytest.raises(httpx.TransportError):
            await request
        # The model server may now answer the held call: nobody is listening any more.
        self.model.release.set()


@asynccontextmanager
async def crashy(tmp_path: Path, database_url: str, replies: list[str]) -> AsyncIterator[Crashy]:
    """Serve the crashy agent on `database_url` (started; stopped when the block ends)."""
    files = tmp_path / "files"
    files.mkdir()
    model = HeldModel(list(replies))
    with held_model_server(model) as fake:
        env = {
            "KEEL_API_KEYS": f"tester:chat:{KEY}",
            "KEEL_DATABASE_URL": database_url,
            "KEEL_RATE_LIMIT": "off",
            "CRASHY_DIR": str(files),
            "CRASHY_MODEL_URL": fake.base_url,
        }
        with keel_process([str(CRASHY)], env=env, cwd=tmp_path) as server:
            await server.start()
            yield Crashy(server=server, model=model, files=files)


def in_background(request: Coroutine[Any, Any, httpx.Response]) -> asyncio.Task[httpx.Response]:
    """Start a request without waiting for it."""
    return asyncio.ensure_future(request)


# Reading the log ---------------------------------------------------------------------------


def runs_of(events: list[Event], tool: str) -> list[Event]:
    """The `tool_executed` records of `tool`."""
    return [e for e in of_type(events, "tool_executed") if e["tool_name"] == tool]


def open_turn(events: list[Event]) -> str:
    """The id of the turn that started and has not ended (the log ends inside it)."""
    started: list[str] = [e["turn_id"] for e in of_type(events, "turn_started")]
    ended = {e["turn_id"] for e in of_type(events, "turn_ended")}
    still_open = [turn for turn in started if turn not in ended]
    assert len(still_open) == 1, f"expected one open turn, found {still_open}"
    assert still_open[0] == started[-1]
    return still_open[0]


def assert_closed_as_interrupted(events: list[Event], at: int, turn_id: str, state: str) -> None:
    """The events from index `at` close the interrupted turn as cancelled, into `state`."""
    closing = [e["event"] for e in events[at : at + 3]]
    assert [e["type"] for e in closing] == [
        "turn_ended",
        "conversation_state_changed",
        "bot_turn_ended",
    ]
    assert closing[0]["turn_id"] == turn_id
    assert closing[0]["stop_reason"] == "cancelled"
    assert "interrupted" in closing[0]["metadata"]["detail"]
    assert closing[1]["state"] == state


def texts(reply: httpx.Response) -> list[str]:
    """The bot messages of a message or approval answer."""
    return [m["text"] for m in reply.json()["messages"]]


# The tests ---------------------------------------------------------------------------------


async def test_killed_during_a_tool_call(tmp_path: Path, database_url: str) -> None:
    async with asyncio.timeout(LIMIT), crashy(tmp_path, database_url, []) as run:
        slow = in_background(run.send("/slow_work"))
        await file_appears(run.files / "slow_work.started")
        before = await run.log()
        await run.kill_during(slow)
        await run.server.start()
        restarted = await run.log()
        view = await run.view()
        (run.files / "slow_work.release").touch()
        again = await run.send("/slow_work")
        after = await run.log()
    turn_id = open_turn(before)
    assert runs_of(before, "run_slow_job") == []
    assert restarted == before, "a restart alone changes nothing in the log"
    # The log still ends inside the killed turn; nothing runs it (docs/deploy.md).
    assert (view["state"], view["running"]) == ("running", False)
    assert view["pending_confirmation"] is None
    assert after[: len(before)] == before, "committed events are kept as they were"
    assert_closed_as_interrupted(after, len(before), turn_id, "idle")
    assert_consistent(after)
    assert again.status_code == 200, again.text
    assert again.json()["stop_reason"] == "end_turn"
    assert "The slow work is done." in texts(again)
    runs = runs_of(after, "run_slow_job")
    assert len(runs) == 1 and not runs[0]["is_error"], "only the run after the restart counts"
    assert lines(run.files / "slow_work.started") == 2
    assert lines(run.files / "slow_work.done") == 1


async def test_killed_during_a_model_call(tmp_path: Path, database_url: str) -> None:
    async with asyncio.timeout(LIMIT), crashy(tmp_path, database_url, ["Hello again."]) as run:
        hello = in_background(run.send("hello"))
        await run.model.arrived.wait()
        before = await run.log()
        await run.kill_during(hello)
        await run.server.start()
        again = await run.send("are you there?")
        after = await run.log()
    turn_id = open_turn(before)
    assert of_type(before, "model_called") == []
    assert after[: len(before)] == before
    assert_closed_as_interrupted(after, len(before), turn_id, "idle")
    assert_consistent(after)
    assert again.status_code == 200, again.text
    assert texts(again) == ["Hello again."] and again.json()["stop_reason"] == "end_turn"
    users = [e["text"] for e in of_type(after, "user_message")]
    assert users == ["hello", "are you there?"]
    assert len(of_type(after, "model_called")) == 1, "the killed call is not on record"
    assert HeldModel.UNDELIVERED not in str(after)
    assert len(run.model.held_requests) == 1
    run.model.assert_complete()


async def test_a_pending_pause_survives_a_kill(tmp_path: Path, database_url: str) -> None:
    async with asyncio.timeout(LIMIT), crashy(tmp_path, database_url, []) as run:
        paused = await run.send("/pay")
        pause_id = paused.json()["pending_confirmation"]["pause_id"]
        # The user answers in the chat instead: the server is in that turn's model call
        # (the pause still pending) when it is killed.
        chat = in_background(run.send("hmm, let me think"))
        await run.model.arrived.wait()
        before = await run.log()
        await run.kill_during(chat)
        await run.server.start()
        view = await run.view()
        approved = await run.approve(pause_id)
        twice = await run.approve(pause_id)
        after = await run.log()
    assert paused.json()["stop_reason"] == "paused"
    turn_id = open_turn(before)
    assert view["pending_confirmation"]["pause_id"] == pause_id, "the pause is still pending"
    assert approved.status_code == 200, approved.text
    assert "Paid." in texts(approved)
    assert twice.status_code == 409
    assert twice.json()["error"]["code"] == "approval.not_pending"
    assert after[: len(before)] == before
    assert_closed_as_interrupted(after, len(before), turn_id, "paused")
    assert_consistent(after)
    runs = runs_of(after, "pay_coins")
    assert len(runs) == 1 and runs[0]["metadata"]["source"] == "tool_confirmation"
    assert lines(run.files / "pay.started") == 1
    assert lines(run.files / "pay.effects") == 1, "approved exactly once"


async def test_killed_during_an_approved_tool(tmp_path: Path, database_url: str) -> None:
    async with asyncio.timeout(LIMIT), crashy(tmp_path, database_url, []) as run:
        (run.files / "pay.hold").touch()
        paused = await run.send("/pay")
        pause_id = paused.json()["pending_confirmation"]["pause_id"]
        approving = in_background(run.approve(pause_id))
        await file_appears(run.files / "pay.started")
        before = await run.log()
        await run.kill_during(approving)
        await run.server.start()
        view = await run.view()
        again = await run.approve(pause_id)
        refused = await run.log()
        (run.files / "pay.hold").unlink()
        asked = await run.send("/pay")
        new_pause = asked.json()["pending_confirmation"]["pause_id"]
        approved = await run.approve(new_pause)
        after = await run.log()
    turn_id = open_turn(before)
    resolved = of_type(before, "pause_point_resolved")
    assert [(e["pause_id"], e["approved"]) for e in resolved] == [(pause_id, True)]
    assert view["pending_confirmation"] is None, "the approval was committed before the run"
    assert again.status_code == 409, "an approval is used once, even if its run was cut off"
    assert again.json()["error"]["code"] == "approval.not_pending"
    assert refused == before, "a refused approval writes nothing"
    assert after[: len(before)] == before
    assert_closed_as_interrupted(after, len(before), turn_id, "idle")
    assert_consistent(after)
    assert runs_of(before, "pay_coins") == [], "the cut-off payment is not recorded as run"
    # Paying again takes a new confirmation; the cut-off run is never repeated on its own.
    assert asked.json()["stop_reason"] == "paused" and new_pause != pause_id
    assert approved.status_code == 200 and "Paid." in texts(approved)
    assert len(runs_of(after, "pay_coins")) == 1
    assert lines(run.files / "pay.started") == 2
    assert lines(run.files / "pay.effects") == 1
