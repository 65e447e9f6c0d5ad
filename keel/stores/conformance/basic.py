"""Contract checks: ordering, reading, listing, conflicts."""

from __future__ import annotations

from keel.errors import ConcurrencyConflict
from keel.events.model import Event
from keel.stores.conformance.harness import StoreHarness
from keel.stores.conformance.samples import messages, varied
from keel.stores.port import EventStore, StoredEvent


def _seqs(stored: list[StoredEvent]) -> list[int]:
    return [item.seq for item in stored]


def _events(stored: list[StoredEvent]) -> list[Event]:
    return [item.event for item in stored]


async def _expect_conflict(
    store: EventStore, conversation_id: str, expected: int, actual: int, events: list[Event]
) -> None:
    try:
        await store.append(conversation_id, expected, events)
    except ConcurrencyConflict as conflict:
        assert (conflict.conversation_id, conflict.expected, conflict.actual) == (
            conversation_id,
            expected,
            actual,
        )
    else:
        raise AssertionError(f"append with expected_seq={expected} should have conflicted")


async def append_and_read_in_order(harness: StoreHarness) -> None:
    """Appends number events from 1 with no gaps; reads return them in order, unchanged."""
    store = await harness.open()
    first, second = messages("a", 3), messages("b", 2)
    stored = await store.append("conv", 0, first)
    assert _seqs(stored) == [1, 2, 3]
    assert _events(stored) == first
    assert {item.conversation_id for item in stored} == {"conv"}
    stored += await store.append("conv", 3, second)
    assert _seqs(stored) == [1, 2, 3, 4, 5]
    read = await store.read("conv")
    assert read == stored
    assert _events(read) == first + second
    assert await store.last_seq("conv") == 5


async def read_after_seq(harness: StoreHarness) -> None:
    """`read(after_seq=n)` returns only the events after n."""
    store = await harness.open()
    events = messages("m", 5)
    await store.append("conv", 0, events)
    assert _seqs(await store.read("conv", after_seq=2)) == [3, 4, 5]
    assert _events(await store.read("conv", after_seq=2)) == events[2:]
    assert await store.read("conv", after_seq=5) == []
    assert await store.read("conv", after_seq=50) == []
    assert _seqs(await store.read("conv", after_seq=0)) == [1, 2, 3, 4, 5]


async def empty_conversation(harness: StoreHarness) -> None:
    """An unknown conversation reads empty; an empty append writes nothing."""
    store = await harness.open()
    assert await store.read("nobody") == []
    assert await store.last_seq("nobody") == 0
    assert await store.list_conversations() == []
    assert await store.append("nobody", 0, []) == []
    assert await store.last_seq("nobody") == 0
    assert await store.list_conversations() == []


async def conversations_are_independent(harness: StoreHarness) -> None:
    """Each conversation has its own numbering and its own events."""
    store = await harness.open()
    await store.append("a", 0, messages("a", 2))
    await store.append("b", 0, messages("b", 3))
    assert _events(await store.read("a")) == messages("a", 2)
    assert _seqs(await store.read("b")) == [1, 2, 3]
    assert (await store.last_seq("a"), await store.last_seq("b")) == (2, 3)


async def list_conversations(harness: StoreHarness) -> None:
    """Listing shows every conversation with its last seq, most recently appended first."""
    store = await harness.open()
    start = harness.clock.now().timestamp()
    await store.append("a", 0, messages("a", 2))
    harness.clock.advance(10)
    await store.append("b", 0, messages("b", 1))
    harness.clock.advance(10)
    await store.append("a", 2, messages("a2", 1))
    summaries = await store.list_conversations()
    assert [(s.conversation_id, s.last_seq) for s in summaries] == [("a", 3), ("b", 1)]
    assert [s.updated_at for s in summaries] == [start + 20, start + 10]


async def stale_expected_seq_conflicts(harness: StoreHarness) -> None:
    """A stale (or future) expected seq raises ConcurrencyConflict and writes nothing."""
    store = await harness.open()
    await store.append("conv", 0, messages("a", 2))
    await _expect_conflict(store, "conv", 1, 2, messages("late", 2))
    await _expect_conflict(store, "conv", 0, 2, messages("late", 1))
    await _expect_conflict(store, "conv", 3, 2, messages("early", 1))
    await _expect_conflict(store, "conv", 1, 2, [])
    await _expect_conflict(store, "new", 1, 0, messages("x", 1))
    assert _events(await store.read("conv")) == messages("a", 2)
    assert await store.last_seq("conv") == 2
    assert await store.read("new") == []
    assert [s.conversation_id for s in await store.list_conversations()] == ["conv"]


async def stores_values_exactly(harness: StoreHarness) -> None:
    """Unicode, nesting, big and tiny numbers, buttons and frames come back equal."""
    store = await harness.open()
    events = varied()
    await store.append("conv", 0, events)
    assert _events(await store.read("conv")) == events


async def large_batch(harness: StoreHarness) -> None:
    """One append of many events is stored whole and in order."""
    store = await harness.open()
    events = messages("bulk", 250)
    await store.append("conv", 0, events)
    read = await store.read("conv")
    assert _seqs(read) == list(range(1, 251))
    assert _events(read) == events
