"""In-process locks per key: what `conversation_lock` is made of inside one process.

`KeyedLocks` hands out one `asyncio.Lock` per key, created on first use and forgotten when
no task holds or waits for it, so a long-running server does not keep a lock for every
conversation it ever saw. Waiters are served first come, first served.

These locks serialise tasks of one event loop only. The in-memory and SQLite stores use
nothing else (so several *processes* serving one SQLite file are not serialised); the
PostgreSQL store takes one of these first and then a database advisory lock, so at most
one task per process waits on the database for a given conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass(kw_only=True, slots=True)
class _Entry:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0
    """Tasks holding or waiting for `lock`; the entry is dropped when this reaches 0."""


class KeyedLocks:
    """One exclusive, non-re-entrant asyncio lock per key."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Entry] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        """Hold the lock for `key` for the duration of the `async with` block."""
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[key]

    def __len__(self) -> int:
        """How many keys are currently held or waited for."""
        return len(self._entries)


PROCESS_LOCKS = KeyedLocks()
"""Shared by every SQL store of this process, keyed by (database, conversation id), so two
store instances on one SQLite file exclude each other like one instance does."""
