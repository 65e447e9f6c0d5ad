"""What a tap saw of one run: the committed events, each store commit, each tool start.

Times are epoch seconds from the engine's clock (the events' own `timestamp`s come from
it too), so a run's spans and measures line up with its log.

These are `NamedTuple`s, not frozen dataclasses: a run makes one of each per commit and
tool start while it runs, and a frozen dataclass costs about three times as much to make
(positionally, a named tuple about 0.35 µs against 1.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from keel.events.model import Event
from keel.stores.port import StoredEvent


class Commit(NamedTuple):
    """One append to the store: the events committed together (one transaction).

    The recorder buffers a turn's events and commits them at its boundaries; `stamped` is
    when the append started and `stored` when the commit was reported (after its events),
    so `stored - stamped` is the append.
    """

    first_seq: int
    last_seq: int
    stamped: float
    stored: float

    @property
    def seconds(self) -> float:
        """How long the commit took (never negative)."""
        return max(0.0, self.stored - self.stamped)


class ToolStart(NamedTuple):
    """A builder tool was about to run (`TurnObserver.tool_started`)."""

    name: str
    at: float


class RunRecord(NamedTuple):
    """Everything one request's run committed, in log order."""

    conversation_id: str
    events: tuple[tuple[int, Event], ...]
    """(seq, event) of every event the run appended."""

    commits: tuple[Commit, ...]
    tool_starts: tuple[ToolStart, ...]
    ended_at: float
    """When the run ended (its last commit was reported, or it failed)."""

    failed: bool = False
    """The run raised instead of returning (the engine recorded what it could)."""


class RawRun(NamedTuple):
    """What a tap kept of one run, as the engine reported it: each commit's stored events
    with when its append started and when it was reported. `record_of` makes the
    `RunRecord` from it away from the request (at a scrape, on the exporting thread)."""

    conversation_id: str
    commits: tuple[tuple[Sequence[StoredEvent], float, float], ...]
    tool_starts: tuple[tuple[str, float], ...]
    """(tool name, when it started): `ToolStart`s in the record."""
    ended_at: float
    failed: bool = False


def record_of(raw: RawRun) -> RunRecord:
    """The `RunRecord` of `raw` (a pure function: the metrics and the span builder may each
    make it, on their own threads)."""
    events = tuple((item.seq, item.event) for batch, _, _ in raw.commits for item in batch)
    commits = tuple(
        Commit(batch[0].seq, batch[-1].seq, stamped, stored)
        for batch, stamped, stored in raw.commits
    )
    starts = tuple(ToolStart(name, at) for name, at in raw.tool_starts)
    return RunRecord(raw.conversation_id, events, commits, starts, raw.ended_at, raw.failed)
