"""The recorder buffers a turn's events and commits them at the turn's boundaries, one
store append (one transaction) each: before a model call, before an effectful tool runs and
after its record, at the end of the turn. Read-only work between boundaries costs no commit.
Observers hear committed events only. A refused commit is rolled back. All on a real
SQLite file (docs/events.md, "What a crash can lose")."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from keel.errors import ConcurrencyConflict, StoreError
from keel.events.fold import ConversationState, fold
from keel.events.model import (
    BotMessage,
    Event,
    MemorySet,
    SlotSet,
    ToolExecuted,
    TurnStarted,
    UserMessage,
)
from keel.ids import FakeClock
from keel.loop.recorder import Recorder
from keel.stores.factory import open_store
from keel.stores.port import ConversationSummary, EventStore, StoredEvent
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).resolve().parent / "commits_agent"


class CountingStore:
    """A real store that notes the kinds of every batch appended to it."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []
        self.durable: list[bool] = []

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        stored = await self.inner.append(conversation_id, expected_seq, events, durable=durable)
        self.batches.append([e.kind for e in events])
        self.durable.append(durable)
        return stored

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        return await self.inner.read(conversation_id, after_seq)

    async def list_conversations(self) -> list[ConversationSummary]:
        return await self.inner.list_conversations()

    async def last_seq(self, conversation_id: str) -> int:
        return await self.inner.last_seq(conversation_id)

    def conversation_lock(self, conversation_id: str) -> AbstractAsyncContextManager[None]:
        return self.inner.conversation_lock(conversation_id)

    async def close(self) -> None:
        await self.inner.close()


class Heard:
    """An observer that keeps what it heard, in order."""

    def __init__(self) -> None:
        self.heard: list[tuple[object, ...]] = []

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        self.heard.extend(("event", item.seq, item.event.kind) for item in events)
        self.heard.append(("committed", events[0].seq, events[-1].seq))

    async def text_delta(self, text: str) -> None:
        self.heard.append(("delta", text))

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        self.heard.append(("tool", name))


def _call(name: str, call_id: str) -> dict[str, object]:
    return {
        "text": None,
        "tool_calls": [{"id": call_id, "name": name, "arguments": {"order_id": "A-1"}}],
    }


async def _turn(tmp_path: Path, tool: str) -> tuple[list[list[str]], list[StoredEvent], list[bool]]:
    store = CountingStore(await open_store(f"sqlite:///{tmp_path / 'c.db'}"))
    script = ScriptedModel([_call(tool, "call_1"), _call(tool, "call_2"), {"text": "Done."}])
    harness = ConversationHarness(AGENT, script, store=store)
    await harness.send("/session_start")
    before = len(store.batches)
    result = await harness.send("Where is A-1?")
    assert [m.text for m in result.bot_messages] == ["Done."]
    log = await store.read(harness.conversation_id)
    await store.close()
    return store.batches[before:], log, store.durable[before:]


async def test_read_only_tools_cost_no_commit(tmp_path: Path) -> None:
    batches, log, durable = await _turn(tmp_path, "lookup")
    # One commit before each of the three model calls, one at the end of the turn.
    assert len(batches) == 4
    assert batches[0][:3] == ["turn_started", "conversation_state_changed", "user_message"]
    assert batches[1] == ["model_called", "tool_executed", "mcp_tool_executed"]
    assert batches[2] == ["model_called", "tool_executed", "mcp_tool_executed"]
    assert batches[3][:2] == ["model_called", "bot_message"]
    assert batches[3][-3:] == ["turn_ended", "conversation_state_changed", "bot_turn_ended"]
    assert [s.seq for s in log] == list(range(1, len(log) + 1))
    assert durable == [False] * 4  # no effect: nothing needs a sync to disk


async def test_an_effectful_tool_is_committed_before_and_after_it_runs(tmp_path: Path) -> None:
    batches, _log, durable = await _turn(tmp_path, "refund")
    # Before the first model call; then per refund: what led to it, then its record.
    assert batches[1] == ["model_called"]
    assert batches[2] == ["tool_executed", "mcp_tool_executed"]
    assert batches[3] == ["model_called"]
    assert batches[4] == ["tool_executed", "mcp_tool_executed"]
    assert batches[5][:2] == ["model_called", "bot_message"]
    assert len(batches) == 6
    # The commits around each refund are durable (synced); the others need not be.
    assert durable == [False, True, True, True, True, False]


async def test_observers_hear_committed_events_only_then_the_commit(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'c.db'}")
    heard = Heard()
    recorder = Recorder(
        store=store,
        conversation_id="c",
        state=ConversationState(),
        clock=FakeClock(),
        observer=heard,
    )
    await recorder.emit(TurnStarted(turn_id="t1"), UserMessage(text="hi", message_id="m1"))
    await recorder.emit(MemorySet(key="project.x", value=[1, 2]))
    assert heard.heard == []
    assert await store.read("c") == []
    assert recorder.state.memory["project.x"] == (1, 2)  # folded at once: the turn reads it
    assert recorder.state.last_seq == 4  # the slot_set copy included
    await recorder.commit()
    assert heard.heard == [
        ("event", 1, "turn_started"),
        ("event", 2, "user_message"),
        ("event", 3, "memory_set"),
        ("event", 4, "slot_set"),
        ("committed", 1, 4),
    ]
    assert recorder.commits == 1
    assert recorder.committed_state == recorder.state
    assert fold(s.event for s in await store.read("c")) == recorder.state
    await recorder.commit()  # nothing buffered: no append
    assert recorder.commits == 1
    await store.close()


async def test_events_are_stamped_once_in_place_and_copies_share_frozen_values(
    tmp_path: Path,
) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'c.db'}")
    clock = FakeClock()
    recorder = Recorder(store=store, conversation_id="c", state=ConversationState(), clock=clock)
    write = MemorySet(key="project.x", value={"a": [1]})
    given = BotMessage(text="hi", response_source="verbatim", timestamp=5.0)
    await recorder.emit(write, given)
    stamped, copy, kept = recorder.events
    assert stamped is write and write.timestamp == clock.now().timestamp()
    assert kept is given and given.timestamp == 5.0
    assert isinstance(copy, SlotSet) and copy.value is write.value
    assert copy == SlotSet(
        name="project.x", value={"a": [1]}, filled_by="engine", timestamp=write.timestamp
    )
    await store.close()


async def test_a_refused_commit_is_rolled_back(tmp_path: Path) -> None:
    database = tmp_path / "c.db"
    store = await open_store(f"sqlite:///{database}")
    with sqlite3.connect(database) as connection:
        connection.execute(
            "CREATE TRIGGER no_tool_runs BEFORE INSERT ON events "
            "WHEN NEW.kind = 'tool_executed' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )
    recorder = Recorder(
        store=store, conversation_id="c", state=ConversationState(), clock=FakeClock()
    )
    await recorder.emit(TurnStarted(turn_id="t1"))
    await recorder.commit()
    committed = recorder.state
    run = ToolExecuted(
        tool_name="t", arguments={}, source="local", result="ok", is_error=False, tool_call_id="c1"
    )
    await recorder.emit(MemorySet(key="project.x", value=1), run)
    with pytest.raises(StoreError):
        await recorder.commit()
    assert recorder.state == committed == recorder.committed_state
    assert [e.kind for e in recorder.events] == ["turn_started"]
    assert recorder.buffered == []
    await recorder.emit(BotMessage(text="after", response_source="verbatim"))
    await recorder.commit()
    assert [s.event.kind for s in await store.read("c")] == ["turn_started", "bot_message"]
    assert recorder.state.last_seq == 2
    await store.close()


async def test_optimistic_concurrency_holds_at_commit(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'c.db'}")
    recorder = Recorder(
        store=store, conversation_id="c", state=ConversationState(), clock=FakeClock()
    )
    await recorder.emit(TurnStarted(turn_id="t1"))
    await store.append("c", 0, [UserMessage(text="another writer", message_id="m")])
    with pytest.raises(ConcurrencyConflict):
        await recorder.commit()
    assert [s.event.kind for s in await store.read("c")] == ["user_message"]
    assert recorder.state == ConversationState()
    await store.close()


class GatedStore(CountingStore):
    """A real store whose appends wait at a gate the test opens (commits overlap)."""

    def __init__(self, inner: EventStore) -> None:
        super().__init__(inner)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        self.entered.set()
        await self.gate.wait()
        return await super().append(conversation_id, expected_seq, events, durable=durable)


async def test_commits_run_one_at_a_time_and_a_cancelled_waiter_blocks_none(
    tmp_path: Path,
) -> None:
    store = GatedStore(await open_store(f"sqlite:///{tmp_path / 'c.db'}"))
    recorder = Recorder(
        store=store, conversation_id="c", state=ConversationState(), clock=FakeClock()
    )
    await recorder.emit(TurnStarted(turn_id="t1"))
    first = asyncio.create_task(recorder.commit())
    await store.entered.wait()  # the first append is under way, its batch taken
    await recorder.emit(BotMessage(text="one", response_source="verbatim"))
    cancelled = asyncio.create_task(recorder.commit())
    second = asyncio.create_task(recorder.commit())
    for _ in range(3):
        await asyncio.sleep(0)  # both reach the wait (no timing: a fixed number of steps)
    assert store.batches == [] and not cancelled.done() and not second.done()
    cancelled.cancel()
    store.gate.set()
    await asyncio.gather(first, second)
    assert cancelled.cancelled()
    assert store.batches == [["turn_started"], ["bot_message"]]
    assert [s.event.kind for s in await store.read("c")] == ["turn_started", "bot_message"]
    assert recorder.committed_state.last_seq == 2 and recorder.buffered == []
    await store.close()
