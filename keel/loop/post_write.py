"""A memory write followed by its post-write hook (spec §3.4), rolled back on rejection.

Used for the writes that hooks guard: the model's `set_fields` and `set:` button taps.
The hook may write other fields itself; a rejection restores the snapshot of all memory
taken before the write, not just the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from keel.events.base import JsonValue
from keel.loop.memory_ops import PlannedWrite, ToolMemory, rollback_events, write_events
from keel.loop.turn import TurnContext
from keel.tools import LocalToolContext
from keel.tools.dispatch import run_hook


@dataclass(frozen=True, kw_only=True, slots=True)
class Rejected:
    """The hook that rejected a write, and why."""

    hook: str
    message: str


async def write_with_hook(
    t: TurnContext,
    planned: PlannedWrite,
    *,
    filled_by: str,
    provenance: Mapping[str, JsonValue] | None = None,
) -> Rejected | None:
    """Write, run the entry's hook if it has one; None when the write stands."""
    snapshot = dict(t.state.memory)
    await t.emit(*write_events(planned, filled_by=filled_by, provenance=provenance))
    namespace, entry = planned.key.split(".", 1)
    skill = t.definition.skill(namespace)
    hook = skill.hooks.get(entry) if skill is not None else None
    if hook is None:
        return None
    memory = ToolMemory(
        schema=t.definition.memory,
        memory=t.state.memory,
        active_skill=namespace,
        filled_by=hook.name,
        writer="hook",
    )
    run = await run_hook(
        hook, context=LocalToolContext(memory=memory), timeout=t.definition.config.tool_timeout
    )
    await t.emit(*memory.take())
    if not run.rejected:
        return None
    await t.emit(*rollback_events(snapshot, dict(t.state.memory)))
    return Rejected(hook=hook.name, message=run.message or "")
