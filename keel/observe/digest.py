"""A run's events sorted once into its turns (`digest`), for the metrics and the spans.

One pass over the run's events: each turn keeps its events, the kinds among them, its
model calls, tool runs and refusals (with the stamp of the events before each), its
decisions, stage timings and end, and its commits. The metrics and the span builder
read these instead of going over every event again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from keel.events.model import (
    Event,
    FlowStarted,
    HistoryCompressed,
    ModelCalled,
    OrderedBlockCancelled,
    OrderedBlockCompleted,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    PausePointCreated,
    PausePointResolved,
    PlanCacheDecided,
    PlanExecuted,
    RoutingDecided,
    StagesTimed,
    StageTimed,
    StepAdvanced,
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
    events: Sequence[tuple[int, Event]] = ()
    kinds: set[type] = field(default_factory=set)
    """The kinds among `events` that decide what its spans hold (`KIND_OF_NOTE`): a turn
    with no stage timing, decision, step or plan event skips those."""
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
    before = stamp = end = 0.0
    first = 0
    roles = _ROLES
    events = record.events
    for index, item in enumerate(events):
        event = item[1]
        kind = type(event)
        role = roles.get(kind)
        if role == _STARTED:
            if current is not None:
                current.events, current.end = events[first:index], end
            current = Turn(started=cast(TurnStarted, event), start_seq=item[0])
            turns.append(current)
            first = index
            before = stamp = end = event.timestamp
            continue
        at = event.timestamp
        if at != stamp:  # `before`: the stamp of the events emitted before these
            before, stamp = stamp, at
            if at > end:
                end = at
        if role is None or current is None:
            continue
        if role == _CALL:
            current.calls.append((item[0], event, before))
        else:
            current.kinds.add(kind)
            if role == _NOTED:
                current.noted.append(event)
            elif role == _ENDED:
                current.noted.append(event)
                current.ended = cast(TurnEnded, event)
    if current is not None:
        current.events, current.end = events[first:], end
    _add_commits(turns, record)
    return turns


def _add_commits(turns: list[Turn], record: RunRecord) -> None:
    """Each turn's commits; a turn ends at its last commit (the run's end for a turn the
    run did not end)."""
    for turn in turns:
        first, last = turn.start_seq, turn.events[-1][0]
        for commit in record.commits:
            if first <= commit[0] <= last:  # `first_seq` (a field by index costs less)
                turn.commits.append(commit)
                if commit[3] > turn.end:  # `stored`
                    turn.end = commit[3]
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
STEP_KINDS = {
    StepAdvanced,
    FlowStarted,
    OrderedBlockResumed,
    OrderedBlockCompleted,
    OrderedBlockCancelled,
    OrderedBlockInterrupted,
}
"""The events a block step's window opens or closes at."""
WINDOW_KINDS = {*STEP_KINDS, PlanExecuted}
"""The kinds a turn has a step or plan window only if it has one of."""
KIND_OF_NOTE = {*NOTED_KINDS, *WINDOW_KINDS}

_STARTED, _CALL, _NOTED, _ENDED, _WINDOW = range(5)
_ROLES: dict[type, int] = {
    TurnStarted: _STARTED,
    **dict.fromkeys(CALL_KINDS, _CALL),
    **dict.fromkeys(STAGE_KINDS | DECISION_KINDS, _NOTED),
    TurnEnded: _ENDED,
    **dict.fromkeys(WINDOW_KINDS, _WINDOW),
}
"""What `digest` does with an event of each kind (nothing, but keep its stamp, for the rest)."""
