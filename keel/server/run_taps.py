"""Run taps: observers the turn runner adds beside a run's feed (telemetry, for one).

`RunRegistry.taps` holds factories; each run asks every factory for a tap (in the request's
context, so a tap may capture the request's trace context), reports every engine callback
to it after the feed, and tells it the outcome once the run ended. A tap that raises is
logged and left out of that run: it never fails a turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from keel.loop.observer import TurnObserver
from keel.server.feed import RunOutcome
from keel.stores.port import StoredEvent

_log = logging.getLogger("keel.server")


class RunTap(TurnObserver, Protocol):
    """A `TurnObserver` that also hears how the run ended."""

    def finished(self, outcome: RunOutcome) -> None:
        """The run ended with `outcome` (called once, after its feed's last item)."""


RunTapFactory = Callable[[str], RunTap]
"""Makes the tap of one run, given the conversation's store key."""


class TeeObserver:
    """Reports to the run's own observer, then to each tap."""

    def __init__(self, first: TurnObserver, taps: Sequence[RunTap]) -> None:
        self._first = first
        self._taps = list(taps)

    def _drop(self, tap: RunTap) -> None:
        _log.exception("a run tap (%s) failed; it is left out of this run", type(tap).__name__)
        self._taps.remove(tap)

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        """A commit of `events` ended."""
        await self._first.committed(events, started_at)
        for tap in list(self._taps):
            try:
                await tap.committed(events, started_at)
            except Exception:
                self._drop(tap)

    async def text_delta(self, text: str) -> None:
        """Model text arrived."""
        await self._first.text_delta(text)
        for tap in list(self._taps):
            try:
                await tap.text_delta(text)
            except Exception:
                self._drop(tap)

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """A tool is about to run."""
        await self._first.tool_started(name, arguments)
        for tap in list(self._taps):
            try:
                await tap.tool_started(name, arguments)
            except Exception:
                self._drop(tap)

    def finished(self, outcome: RunOutcome) -> None:
        """Tell each tap still in the run how it ended."""
        for tap in self._taps:
            try:
                tap.finished(outcome)
            except Exception:
                _log.exception("a run tap (%s) failed at the run's end", type(tap).__name__)


def open_taps(factories: Sequence[RunTapFactory], key: str) -> list[RunTap]:
    """The taps of one run (a factory that raises is logged and skipped)."""
    taps: list[RunTap] = []
    for make in factories:
        try:
            taps.append(make(key))
        except Exception:
            _log.exception("a run tap factory failed; the run goes on without it")
    return taps
