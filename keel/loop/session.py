"""Sessions: when one is due, and the project memory a new session starts with."""

from __future__ import annotations

from collections.abc import Mapping

from keel.events.base import JsonValue, freeze_json
from keel.events.fold import ConversationState
from keel.events.model import Event, MemorySet, SessionStarted, SlotSet
from keel.ids import Clock
from keel.loop.turn import TurnContext
from keel.memory.frozen import thaw
from keel.project.definition import AgentDefinition


def session_due(
    definition: AgentDefinition, clock: Clock, history: tuple[Event, ...], state: ConversationState
) -> bool:
    """A new session starts: no session yet, the last one ended (hangup), or it expired."""
    if not any(isinstance(e, SessionStarted) for e in history):
        return True
    if state.status == "ended":
        # After a hangup the session is over: the next message starts a new one.
        return True
    minutes = definition.config.session_config.session_expiration_time
    last = history[-1].timestamp
    return minutes > 0 and clock.now().timestamp() - last > minutes * 60


async def seed_project_memory(t: TurnContext, metadata: Mapping[str, JsonValue]) -> None:
    """Project fields: `seed: true` ones from channel metadata, the others that are still
    unset take their `initial_value` (spec §3.2)."""
    writes: list[Event] = []
    for field in t.definition.memory.fields_of("project"):
        if field.seed and metadata.get(field.name) is not None:
            value = freeze_json(metadata[field.name])
        elif field.initial_value is not None and t.state.memory.get(field.key) is None:
            value = freeze_json(thaw(field.initial_value))
        else:
            continue
        writes += [
            MemorySet(key=field.key, value=value),
            SlotSet(name=field.key, value=value, filled_by="session_start"),
        ]
    await t.emit(*writes)
