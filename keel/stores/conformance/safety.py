"""Contract checks: saved data is immutable, durable, and safe under concurrent writers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from keel.errors import ConcurrencyConflict
from keel.events.codec import decode_event, encode_event
from keel.events.model import Event, ToolExecuted
from keel.stores.conformance.harness import StoreHarness
from keel.stores.conformance.samples import messages
from keel.stores.port import EventStore, StoredEvent


async def saved_data_is_immutable(harness: StoreHarness) -> None:
    """Nothing a caller does to its objects after an append or a read changes saved data."""
    store = await harness.open()
    arguments: dict[str, object] = {"ids": [1, 2], "filter": {"status": "open"}}
    tool = ToolExecuted(
        tool_name="t",
        arguments=arguments,  # type: ignore[arg-type]
        source="local",
        result="r",
        is_error=False,
        tool_call_id="c",
    )
    batch: list[Event] = [tool, *messages("m", 2)]
    pristine = [decode_event(encode_event(event)) for event in batch]
    returned = await store.append("conv", 0, batch)

    arguments["ids"].append(3)  # type: ignore[attr-defined]
    arguments["filter"] = "changed"
    batch.clear()
    returned.clear()
    # Frozen dataclasses can still be forced; a store must not hold on to caller objects.
    object.__setattr__(tool, "result", "tampered")
    object.__setattr__(tool, "arguments", {"ids": "tampered"})
    assert [item.event for item in await store.read("conv")] == pristine

    read = await store.read("conv")
    object.__setattr__(read[1].event, "text", "tampered")
    read.clear()
    assert [item.event for item in await store.read("conv")] == pristine


async def reopen_reads_everything_back(harness: StoreHarness) -> None:
    """After closing every handle, a new one reads all data and can continue appending."""
    first = await harness.open()
    await first.append("a", 0, messages("a", 3))
    await first.append("b", 0, messages("b", 2))
    await harness.close()
    second = await harness.open()
    assert [item.event for item in await second.read("a")] == messages("a", 3)
    assert [item.event for item in await second.read("b")] == messages("b", 2)
    assert {(s.conversation_id, s.last_seq) for s in await second.list_conversations()} == {
        ("a", 3),
        ("b", 2),
    }
    await second.append("a", 3, messages("a4", 1))
    assert await second.last_seq("a") == 4


async def _race(
    stores: Sequence[EventStore], conversation_id: str, expected: int
) -> tuple[list[StoredEvent], list[list[Event]]]:
    """Let one append per store race with the same expected seq; return the winner."""
    batches = [messages(f"writer{i}", i + 1) for i in range(len(stores))]
    appends = [
        store.append(conversation_id, expected, batch)
        for store, batch in zip(stores, batches, strict=True)
    ]
    results = await asyncio.gather(*appends, return_exceptions=True)
    winners = [result for result in results if isinstance(result, list)]
    losers = [result for result in results if isinstance(result, ConcurrencyConflict)]
    assert len(winners) == 1, results
    assert len(losers) == len(stores) - 1, results
    assert all(loser.expected == expected for loser in losers)
    return winners[0], batches


async def _check_race(stores: Sequence[EventStore]) -> None:
    await stores[0].append("conv", 0, messages("base", 2))
    for _ in range(2):
        before = [item.event for item in await stores[0].read("conv")]
        start = len(before)
        winner, batches = await _race(stores, "conv", start)
        won = [item.event for item in winner]
        assert won in batches
        assert [item.seq for item in winner] == list(range(start + 1, start + len(won) + 1))
        log = await stores[-1].read("conv")
        assert [item.seq for item in log] == list(range(1, start + len(won) + 1))
        assert [item.event for item in log] == before + won
    # A brand-new conversation is raced for too.
    winner, _ = await _race(stores, "fresh", 0)
    assert await stores[-1].read("fresh") == winner


async def concurrent_appends_same_instance(harness: StoreHarness) -> None:
    """Racing appends through one store: exactly one wins, nothing is lost or interleaved."""
    store = await harness.open()
    await _check_race([store] * 4)


async def concurrent_appends_two_instances(harness: StoreHarness) -> None:
    """Racing appends through separate store instances on the same storage."""
    first, second = await harness.open(), await harness.open()
    await _check_race([first, second, first, second])


async def retrying_writers_lose_nothing(harness: StoreHarness) -> None:
    """Writers that re-read and retry on conflict all get their event in, exactly once."""
    stores = [await harness.open(), await harness.open()]

    async def write(index: int) -> None:
        store = stores[index % len(stores)]
        for _ in range(100):
            last = await store.last_seq("conv")
            try:
                await store.append("conv", last, messages(f"w{index}", 1))
            except ConcurrencyConflict:
                await asyncio.sleep(0)
                continue
            return
        raise AssertionError(f"writer {index} never got in")

    await asyncio.gather(*(write(i) for i in range(6)))
    log = await stores[0].read("conv")
    assert [item.seq for item in log] == [1, 2, 3, 4, 5, 6]
    texts = sorted(getattr(item.event, "text", "") for item in log)
    assert texts == sorted(f"w{i} 1" for i in range(6))
