"""What a tap saw of one run: the committed events, each store commit, each tool start.

Times are epoch seconds from the engine's clock (the events' own `timestamp`s come from
it too), so a run's spans and measures line up with its log.

These are `NamedTuple`s, not frozen dataclasses: a run makes one of each per commit and
tool start while it runs, and a frozen dataclass costs about three times as much to make
(positionally, a named tuple about 0.35 µs against 1.1).
"""

from __future__ import annotations

from typing import NamedTuple

from keel.events.model import Event


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
