"""What the plan cascade reads of the conversation around a plan (seed 003).

A plan recorded in one customer's conversation must carry nothing of that customer to the
next one. So the cascade gives the cache, per turn:

* `readable_memory`: the memory entries the skill may read (`keel.memory.can_read`), what
  `${MEMORY:key}` refs resolve to in this conversation (at lookup: an entry whose refs are
  not all set is refused; at run time: through the runtime values, `memory_runtime`);
* `record_context`: at record time, that memory, the texts of the memory the skill may not
  read, the conversation's earlier turns (user messages and tool outputs; the bot's
  replies apart) and this turn's step outputs, so the compiler can tell a value from the
  request from one the model took from the conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from keel.events.model import BotMessage, Event, ToolExecuted, UserMessage
from keel.loop.turn import TurnContext
from keel.memory import can_read
from keel.plans.provenance import MEMORY_PREFIX, RecordContext
from keel.project.definition import Skill


def readable_memory(t: TurnContext, skill: Skill | None) -> dict[str, object]:
    """Qualified key -> value of the set memory entries `skill` may read (none without one)."""
    if skill is None:
        return {}
    out: dict[str, object] = {}
    for key, value in sorted(t.state.memory.items()):
        field = t.definition.memory.field(key)
        if field is not None and not field.is_system and can_read(field, skill.skill_id):
            out[key] = value
    return out


def memory_runtime(t: TurnContext) -> dict[str, object]:
    """The runtime values that carry `${MEMORY:key}` for the active skill's plans."""
    memory = readable_memory(t, t.active_skill)
    return {MEMORY_PREFIX + key: value for key, value in memory.items()}


def record_context(
    t: TurnContext, skill: Skill, outputs: Mapping[int, str] | None = None
) -> RecordContext:
    """What the conversation held besides this turn's request (see the module docstring)."""
    memory = readable_memory(t, skill)
    hidden = tuple(
        _text(value) for key, value in sorted(t.state.memory.items()) if key not in memory
    )
    return RecordContext(
        memory=MappingProxyType(memory),
        hidden=hidden,
        earlier=tuple(_texts(t.history)),
        outputs=MappingProxyType(dict(outputs or {})),
        replies=tuple(e.text for e in t.history if isinstance(e, BotMessage) and e.text),
    )


def run_outputs(runs: Iterable[ToolExecuted]) -> dict[int, str]:
    """Step id (1-based, in order) -> the result text of each run."""
    return {i: run.result for i, run in enumerate(runs, 1)}


def _texts(events: Iterable[Event]) -> Iterable[str]:
    for event in events:
        if isinstance(event, UserMessage) and event.text:
            yield event.text  # the bot's replies are `replies`
        elif isinstance(event, ToolExecuted) and event.result:
            yield event.result


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
