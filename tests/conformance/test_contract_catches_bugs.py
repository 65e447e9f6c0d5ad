"""The contract is only worth something if it fails broken stores; these prove it does."""

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest

from keel.errors import ConcurrencyConflict
from keel.events.model import Event
from keel.ids import FakeClock
from keel.stores.conformance import CHECKS, Capabilities, Check, locking
from keel.stores.port import ConversationSummary, EventStore, StoredEvent


class _ListStore:
    """A naive store keeping caller objects; flags switch individual bugs on."""

    def __init__(
        self, *, check_seq: bool = True, reverse: bool = False, lock: str = "per_conversation"
    ) -> None:
        self.logs: dict[str, list[Event]] = {}
        self.check_seq = check_seq
        self.reverse = reverse
        self.lock = lock
        self.locks: dict[str, asyncio.Lock] = {}

    async def append(
        self,
        conversation_id: str,
        expected_seq: int,
        events: Sequence[Event],
        *,
        durable: bool = True,
    ) -> list[StoredEvent]:
        log = self.logs.setdefault(conversation_id, [])
        if self.check_seq and len(log) != expected_seq:
            raise ConcurrencyConflict(conversation_id, expected_seq, len(log))
        start = len(log)
        log.extend(events)
        return [
            StoredEvent(conversation_id=conversation_id, seq=start + i, event=event)
            for i, event in enumerate(events, start=1)
        ]

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        items = [
            StoredEvent(conversation_id=conversation_id, seq=i, event=event)
            for i, event in enumerate(self.logs.get(conversation_id, []), start=1)
        ][after_seq:]
        return items[::-1] if self.reverse else items

    async def list_conversations(self) -> list[ConversationSummary]:
        return [
            ConversationSummary(conversation_id=cid, last_seq=len(log), updated_at=0.0)
            for cid, log in self.logs.items()
            if log
        ]

    async def last_seq(self, conversation_id: str) -> int:
        return len(self.logs.get(conversation_id, []))

    @asynccontextmanager
    async def conversation_lock(self, conversation_id: str) -> AsyncIterator[None]:
        if self.lock == "none":
            yield
            return
        key = "all" if self.lock == "global" else conversation_id
        lock = self.locks.setdefault(key, asyncio.Lock())
        await lock.acquire()
        if self.lock == "leaky":
            yield  # released only when the block ends normally
            lock.release()
            return
        try:
            yield
        finally:
            lock.release()

    async def close(self) -> None:
        pass


class _Harness:
    name = "broken"
    capabilities = Capabilities(durable=False)

    def __init__(self, store: _ListStore) -> None:
        self.clock = FakeClock()
        self.store = store

    async def open(self) -> EventStore:
        return self.store

    async def close(self) -> None:
        pass


def _check(name: str) -> Check:
    return next(check for check in CHECKS if check.name == name)


@pytest.mark.parametrize(
    ("store_flags", "check_name"),
    [
        ({"check_seq": False}, "stale_expected_seq_conflicts"),
        ({"check_seq": False}, "concurrent_appends_same_instance"),
        ({"reverse": True}, "append_and_read_in_order"),
        ({}, "saved_data_is_immutable"),
        ({}, "list_conversations"),
        ({"lock": "none"}, "lock_serialises_one_conversation"),
        ({"lock": "none"}, "locked_turns_never_conflict"),
        ({"lock": "global"}, "lock_leaves_other_conversations_free"),
        ({"lock": "leaky"}, "lock_released_on_error_and_cancel"),
    ],
)
async def test_contract_rejects_a_broken_store(
    store_flags: dict[str, Any], check_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lock that blocks what it must not is caught by the checks' timeout; keep it short.
    monkeypatch.setattr(locking, "LOCK_TIMEOUT_S", 0.2)
    harness = _Harness(_ListStore(**store_flags))
    with pytest.raises(AssertionError):
        await _check(check_name).run(harness)


async def test_the_naive_store_passes_the_checks_it_does_not_break() -> None:
    # Guards the test above: each failure there comes from the bug, not from the harness.
    await _check("append_and_read_in_order").run(_Harness(_ListStore()))
    await _check("stale_expected_seq_conflicts").run(_Harness(_ListStore()))
    for name in (
        "lock_serialises_one_conversation",
        "lock_leaves_other_conversations_free",
        "lock_released_on_error_and_cancel",
        "locked_turns_never_conflict",
    ):
        await _check(name).run(_Harness(_ListStore()))
