"""Replaying a stored conversation through an agent and diffing the events."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from keel.events.base import to_plain
from keel.events.model import Event, PausePointCreated
from keel.ids import FakeClock, SequentialIds
from keel.llm.port import ModelRequest, ModelResponse
from keel.llm.replay import ReplayModel
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.replay.log import Approve, Say, comparable, read_recording
from keel.stores.memory import InMemoryEventStore


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplayReport:
    """The replayed events and how they differ from the stored ones."""

    original: tuple[Event, ...]
    replayed: tuple[Event, ...]
    diff: tuple[str, ...]
    """Unified diff of the comparable forms; empty when the runs agree."""

    @property
    def same(self) -> bool:
        """The replay produced the same events."""
        return not self.diff


def _plain(reply: object) -> dict[str, object]:
    plain = to_plain(reply)
    return plain if isinstance(plain, dict) else {}


class _AsRecorded:
    """The replayed replies, each reported under the model id that first gave it."""

    def __init__(self, inner: ReplayModel, models: Sequence[str]) -> None:
        self._inner = inner
        self._models = list(models)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self._inner.complete(request)
        model = self._models.pop(0) if self._models else response.model
        return dataclasses.replace(response, model=model)


async def replay(
    definition: AgentDefinition, events: Sequence[Event], *, conversation_id: str = "replay"
) -> ReplayReport:
    """Run the stored conversation's requests again with its recorded model replies."""
    recording = read_recording(events)
    model = ReplayModel.from_messages(
        [{**_plain(reply), "role": "assistant"} for reply in recording.replies],
        source="event log",
    )
    store = InMemoryEventStore()
    engine = Engine(
        definition=definition,
        store=store,
        model=_AsRecorded(model, recording.models),
        clock=FakeClock(),
        ids=SequentialIds("replay-"),
    )
    for step in recording.steps:
        if isinstance(step, Say):
            await engine.handle(conversation_id, step.text)
        elif isinstance(step, Approve):
            pauses = [
                e.pause_id
                for e in (s.event for s in await store.read(conversation_id))
                if isinstance(e, PausePointCreated)
            ]
            await engine.resolve_pause(conversation_id, pauses[step.index], step.approved)
    replayed = tuple(s.event for s in await store.read(conversation_id))
    diff = difflib.unified_diff(
        comparable(events), comparable(replayed), "stored", "replayed", lineterm=""
    )
    return ReplayReport(original=tuple(events), replayed=replayed, diff=tuple(diff))
