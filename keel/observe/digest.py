"""A run's events sorted once into its turns (`digest`), for the metrics and the spans.

One pass over the run's events: each turn keeps its events, the kinds among them, its
model calls, tool runs and refusals (with the stamp of the events before each), its
decisions, stage timings and end, and its commits. The metrics and the span builder
read these instead of going over every event again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from keel.events.model import (
    Event,
    HistoryCompressed,
    ModelCalled,
    PausePointCreated,
    PausePointResolved,
    PlanCacheDecided,
    RoutingDecided,
    StagesTimed,
    StageTimed,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.observe.record import Commit, RunRecord


@dataclass(kw_only=True, slots=True)
class Turn:
    """One turn of a run: its events, and those the metrics and spans read, sorted once."""

    started: TurnStarted
    start_seq: int
    events: list[tuple[int, Event]] = field(default_factory=list)
    kinds: set[type] = field(default_factory=set)
    """The event types among `events` (a turn with no step or plan event skips those)."""
    ended: TurnEnded | None = None
    calls: list[tuple[int, Event, float]] = field(default_factory=list)
    """(seq, model call / tool run / refusal, the stamp of the events before it)."""
    noted: list[Event] = field(default_factory=list)
    """The turn's decisions, stage timings and end, in order."""
    commits: list[Commit] = field(default_factory=list)
    end: float = 0.0


def digest(record: RunRecord) -> list[Turn]:
    """The run's turns, each with its events, calls, noted events and commits, in one pass
    over each (events before the run's first `turn_started` belong to no turn)."""
    turns: list[Turn] = []
    current: Turn | None = None
    before = stamp = 0.0
    calls, noted = CALL_KINDS, NOTED_KINDS
    for item in record.events:
        event = item[1]
        kind = type(event)
        at = event.timestamp
        if kind is TurnStarted:
            current = Turn(started=cast(TurnStarted, event), start_seq=item[0], end=at)
            turns.append(current)
            before = stamp = at
        if current is None:
            continue
        current.events.append(item)
        current.kinds.add(kind)
        if at != stamp:  # `before`: the stamp of the events emitted before these
            before, stamp = stamp, at
            if at > current.end:
                current.end = at
        if kind in calls:
            current.calls.append((item[0], event, before))
        elif kind in noted:
            current.noted.append(event)
            if kind is TurnEnded:
                current.ended = cast(TurnEnded, event)
    _add_commits(turns, record)
    return turns


def _add_commits(turns: list[Turn], record: RunRecord) -> None:
    """Each turn's commits; a turn ends at its last commit (the run's end for a turn the
    run did not end)."""
    for turn in turns:
        first, last = turn.start_seq, turn.events[-1][0]
        for commit in record.commits:
            if first <= commit.first_seq <= last:
                turn.commits.append(commit)
                if commit.stored > turn.end:
                    turn.end = commit.stored
    if turns and turns[-1].ended is None:
        turns[-1].end = max(turns[-1].end, record.ended_at)


CALL_KINDS = {ModelCalled, ToolExecuted, ToolCallRefused}
STAGE_KINDS = {StageTimed, StagesTimed}
DECISION_KINDS = {
    RoutingDecided,
    PlanCacheDecided,
    PausePointCreated,
    PausePointResolved,
    HistoryCompressed,
}
NOTED_KINDS = {*STAGE_KINDS, *DECISION_KINDS, TurnEnded}
