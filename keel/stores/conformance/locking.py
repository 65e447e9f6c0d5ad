"""Contract checks for `conversation_lock`: turns of one conversation never overlap.

The checks coordinate tasks with `asyncio.Event` handshakes, never with timed sleeps. A
holder that should keep a contender out gives it every chance to get in (many loop turns
and round trips to the storage) before it leaves; with a broken lock the contender is in
by then. Every wait is bounded by `LOCK_TIMEOUT_S`, so a lock that blocks what it must
not fails the check instead of hanging it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from keel.errors import ConcurrencyConflict
from keel.stores.conformance.harness import StoreHarness
from keel.stores.conformance.samples import messages
from keel.stores.port import EventStore

LOCK_TIMEOUT_S = 10.0
"""Upper bound for anything a correct lock lets finish (tests may lower it)."""

_T = TypeVar("_T")


class _Boom(Exception):
    """Raised inside a lock block on purpose."""


async def _within(awaitable: Awaitable[_T], what: str) -> _T:
    try:
        return await asyncio.wait_for(awaitable, LOCK_TIMEOUT_S)
    except TimeoutError:
        raise AssertionError(f"{what} did not finish within {LOCK_TIMEOUT_S}s") from None


async def _give_way(store: EventStore) -> None:
    """Let every other task run as far as it can: loop turns and storage round trips."""
    for _ in range(3):
        for _ in range(20):
            await asyncio.sleep(0)
        await store.last_seq("give-way")


async def _two(harness: StoreHarness) -> tuple[EventStore, EventStore]:
    first, second = await harness.open(), await harness.open()
    # Warm both up, so a contender's attempt is as quick as it will ever be.
    for store in (first, second):
        async with store.conversation_lock("warm-up"):
            pass
    return first, second


async def lock_serialises_one_conversation(harness: StoreHarness) -> None:
    """While one holder has a conversation, another (on another instance) waits for it."""
    first, second = await _two(harness)
    trace: list[str] = []
    inside, trying = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with first.conversation_lock("conv"):
            trace.append("first in")
            inside.set()
            await trying.wait()
            await _give_way(first)
            trace.append("first out")

    async def contender() -> None:
        await inside.wait()
        trying.set()
        async with second.conversation_lock("conv"):
            trace.append("second in")

    await _within(asyncio.gather(holder(), contender()), "two holders of one conversation")
    assert trace == ["first in", "first out", "second in"]


async def lock_leaves_other_conversations_free(harness: StoreHarness) -> None:
    """Holding one conversation blocks no other, on the same or another instance."""
    first, second = await _two(harness)
    inside = asyncio.Event()
    others_done = asyncio.Event()

    async def holder() -> None:
        async with first.conversation_lock("a"):
            inside.set()
            # Stays inside until the others got in: a lock that blocks them never ends.
            await others_done.wait()

    async def others() -> None:
        await inside.wait()
        async with first.conversation_lock("b"):
            pass
        async with second.conversation_lock("c"):
            async with second.conversation_lock("d"):
                pass
        others_done.set()

    await _within(asyncio.gather(holder(), others()), "locks of other conversations")


async def lock_released_on_error_and_cancel(harness: StoreHarness) -> None:
    """An error or a cancellation in the block releases; a cancelled waiter leaves no lock."""
    first, second = await _two(harness)
    try:
        async with first.conversation_lock("conv"):
            raise _Boom
    except _Boom:
        pass
    await _within(_enter_and_leave(second, "conv"), "locking after an error in the block")

    inside = asyncio.Event()

    async def hold_forever() -> None:
        async with first.conversation_lock("conv"):
            inside.set()
            await asyncio.Event().wait()

    holder = asyncio.create_task(hold_forever())
    await inside.wait()
    waiter = asyncio.create_task(_enter_and_leave(second, "conv"))
    await _give_way(second)
    assert not waiter.done(), "a waiter got a lock that was held"
    for task in (waiter, holder):
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    await _within(_enter_and_leave(second, "conv"), "locking after cancelled holder and waiter")
    await _within(_enter_and_leave(first, "conv"), "locking again on the first instance")


async def _enter_and_leave(store: EventStore, conversation_id: str) -> None:
    async with store.conversation_lock(conversation_id):
        pass


async def locked_turns_never_conflict(harness: StoreHarness) -> None:
    """Turns (read last seq, then append) under the lock never race, across instances."""
    stores = [await harness.open(), await harness.open()]
    inside = 0
    most_inside = 0

    async def turns(index: int) -> None:
        nonlocal inside, most_inside
        store = stores[index % len(stores)]
        for turn in range(5):
            async with store.conversation_lock("conv"):
                inside += 1
                most_inside = max(most_inside, inside)
                last = await store.last_seq("conv")
                await asyncio.sleep(0)
                try:
                    await store.append("conv", last, messages(f"w{index}t{turn}", 2))
                except ConcurrencyConflict as conflict:
                    raise AssertionError(
                        f"a turn appended under the lock: {conflict}"
                    ) from conflict
                inside -= 1

    await _within(asyncio.gather(*(turns(i) for i in range(4))), "locked turns")
    assert most_inside == 1
    log = await stores[0].read("conv")
    assert [item.seq for item in log] == list(range(1, 41))
    # Each turn's two events are adjacent: turns did not interleave.
    turns_of = [getattr(item.event, "text", "").rsplit(" ", 1)[0] for item in log]
    assert all(turns_of[i] == turns_of[i + 1] for i in range(0, len(turns_of), 2))
