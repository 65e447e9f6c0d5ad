"""Replaying a stored conversation through an agent and diffing the events."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from keel.events.base import to_plain
from keel.events.model import Event, PausePointCreated
from keel.ids import FakeClock, SequentialIds
from keel.llm.none import NoModel
from keel.llm.port import Model, ModelRequest, ModelResponse
from keel.llm.replay import ReplayModel
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.replay.log import Approve, RecordedCall, Say, compared, read_recording
from keel.replay.measurements import MeasuredDifference, differences
from keel.stores.memory import InMemoryEventStore


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplayReport:
    """The replayed events and how they differ from the stored ones."""

    original: tuple[Event, ...]
    replayed: tuple[Event, ...]
    diff: tuple[str, ...]
    """Unified diff of the behaviour (measurements left out); empty when the runs agree."""
    measurements: tuple[MeasuredDifference, ...] = ()
    """Measurements that differ between events that behaved the same: reported, not a
    difference of behaviour."""

    @property
    def same(self) -> bool:
        """The replay behaved the same (measurements may differ)."""
        return not self.diff


def _plain(reply: object) -> dict[str, object]:
    plain = to_plain(reply)
    return plain if isinstance(plain, dict) else {}


class _AsRecorded:
    """The replayed replies, each reported under the model id that first gave it and with
    the usage that was reported for it, so cost and tokens come out as stored."""

    def __init__(self, inner: ReplayModel, calls: Sequence[RecordedCall]) -> None:
        self._inner = inner
        self._calls = list(calls)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self._inner.complete(request)
        if not self._calls:
            return response
        call = self._calls.pop(0)
        return dataclasses.replace(response, model=call.model, usage=call.usage)


class _StoredTime:
    """The replay's clock: each request runs at the time the stored one began, and time
    stands still during it (so sessions expire as they did; timings measure zero)."""

    def __init__(self) -> None:
        self._now = FakeClock().now()

    def now(self) -> datetime:
        return self._now

    def move_to(self, timestamp: float) -> None:
        """Go forward to `timestamp` (epoch seconds); never back."""
        self._now = max(self._now, datetime.fromtimestamp(timestamp, UTC))


async def replay(
    definition: AgentDefinition, events: Sequence[Event], *, conversation_id: str = "replay"
) -> ReplayReport:
    """Run the stored conversation's requests again with its recorded model replies (or
    with no model, for a log without model calls)."""
    recording = read_recording(events)
    model: Model = NoModel()
    if recording.with_model:
        replies = ReplayModel.from_messages(
            [{**_plain(call.reply), "role": "assistant"} for call in recording.calls],
            source="event log",
        )
        model = _AsRecorded(replies, recording.calls)
    store = InMemoryEventStore()
    clock = _StoredTime()
    engine = Engine(
        definition=definition,
        store=store,
        model=model,
        clock=clock,
        ids=SequentialIds("replay-"),
    )
    for step in recording.steps:
        clock.move_to(step.at)
        if isinstance(step, Say):
            await engine.handle(conversation_id, step.text, metadata=step.metadata)
        elif isinstance(step, Approve):
            pauses = [
                e.pause_id
                for e in (s.event for s in await store.read(conversation_id))
                if isinstance(e, PausePointCreated)
            ]
            await engine.resolve_pause(conversation_id, pauses[step.index], step.approved)
    replayed = tuple(s.event for s in await store.read(conversation_id))
    stored, again = compared(events), compared(replayed)
    diff = difflib.unified_diff(
        [c.line for c in stored], [c.line for c in again], "stored", "replayed", lineterm=""
    )
    return ReplayReport(
        original=tuple(events),
        replayed=replayed,
        diff=tuple(diff),
        measurements=differences(stored, again),
    )
