"""Injected sources of time and identity; core code never reads the wall clock itself."""

from __future__ import annotations

import itertools
import os
import time
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Protocol


class Clock(Protocol):
    """Tells the current time (UTC)."""

    def now(self) -> datetime: ...


class IdSource(Protocol):
    """Makes new unique ids."""

    def new_id(self) -> str: ...


class SystemClock:
    """The real clock."""

    now = staticmethod(partial(datetime.now, UTC))
    """`datetime.now(UTC)`, called without a Python frame of its own (a turn reads the
    clock about fifty times)."""

    seconds = staticmethod(time.time)
    """`now()` in epoch seconds, without making a `datetime` (about 0.9 µs): the builtin
    itself, so a reading costs no Python call (a telemetry tap reads it per commit)."""


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)
"""The version (4) and variant (RFC 4122) bits of a UUID4, as `uuid.uuid4` sets them."""


class UuidSource:
    """Random UUID4 hex ids."""

    def new_id(self) -> str:
        # `uuid.uuid4().hex` without making a `UUID` (0.8 against 1.9 µs; several per turn).
        return "%032x" % ((int.from_bytes(os.urandom(16)) & _UUID4_CLEAR) | _UUID4_SET)


class FakeClock:
    """A clock that moves only when told to; starts at a fixed instant."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


class SequentialIds:
    """Deterministic ids: `<prefix>1`, `<prefix>2`, ..."""

    def __init__(self, prefix: str = "id") -> None:
        self._prefix = prefix
        self._counter = itertools.count(1)

    def new_id(self) -> str:
        return f"{self._prefix}{next(self._counter)}"


def monotonic() -> float:
    """Seconds from a monotonic clock, for measuring durations in adapters."""
    return time.monotonic()
