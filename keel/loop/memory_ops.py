"""Memory writes as the engine performs them: rules, coercion, events, rollback.

`plan_write` decides (pure) whether a writer may write a value and what it becomes after
coercion; `write_events` turns an accepted write into `memory_set` + `slot_set` (or
`memory_cleared`); `rollback_events` restores a snapshot after a post-write hook rejects a
write. `ToolMemory` is the `context.memory` a running tool sees: writes apply at once (the
tool reads its own writes) and are flushed to the log by the engine, even when the tool is
cancelled afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from keel.errors import ToolError
from keel.events.base import JsonValue, freeze_json
from keel.events.model import Event, MemoryCleared, MemorySet, SlotSet
from keel.memory import MemorySchema, check_write, coerce
from keel.memory.access import WRITE_ONCE, Writer


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """A write the rules refused; `code` is dotted (`memory.write.*`)."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True, slots=True)
class PlannedWrite:
    """An accepted write: the qualified key and the coerced value (None clears)."""

    key: str
    value: object
    unchanged: bool = False
    """A write-once field written again with the value it holds: accepted, and no event
    (nothing changes)."""


class MemoryWriteRefused(ToolError):
    """A tool's `context.memory` write the rules refused; `code` is the refusal's
    (`memory.write.*`), so the tool run is logged with it and the model reads why."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"{refusal.code}: {refusal.message}")
        self.code = refusal.code


def plan_write(
    schema: MemorySchema,
    memory: Mapping[str, object],
    name: str,
    raw: object,
    writer: Writer,
    active_skill: str | None,
    collect_owned: frozenset[str] = frozenset(),
) -> PlannedWrite | Refusal:
    """May `writer` set `name` (bare or qualified) to `raw` now, and to what value?"""
    field = schema.resolve(name, active_skill)
    # A field still holding its declared initial value has not been written yet, so an
    # initial value never makes a write-once project field unwritable.
    current = memory.get(field.key) if field is not None else None
    is_set = current is not None and (field is None or current != field.initial_value)
    decision = check_write(schema, name, writer, active_skill, is_set, collect_owned)
    if decision.code == WRITE_ONCE and decision.field is not None and raw is not None:
        again = coerce(decision.field, raw)
        if again.ok and freeze_json(again.value) == current:
            # Write-once forbids a change; the value it already holds is no change (a
            # confirmed cancel of a row already cancelled writes "cancelled" again).
            return PlannedWrite(key=decision.field.key, value=again.value, unchanged=True)
    if not decision.allowed or decision.field is None:
        return Refusal(code=decision.code or "memory.write.refused", message=decision.reason or "")
    field = decision.field
    if raw is None:
        return PlannedWrite(key=field.key, value=None)
    result = coerce(field, raw)
    if not result.ok:
        return Refusal(
            code="memory.write.bad_value",
            message=f"{field.key}: {result.error}",
        )
    return PlannedWrite(key=field.key, value=result.value)


def write_events(
    write: PlannedWrite, *, filled_by: str, provenance: Mapping[str, JsonValue] | None = None
) -> tuple[Event, ...]:
    """`memory_set` + its `slot_set` copy, or `memory_cleared` for None; nothing for an
    unchanged write-once value."""
    if write.unchanged:
        return ()
    if write.value is None:
        return (MemoryCleared(key=write.key),)
    value = freeze_json(write.value)
    meta = {"provenance": dict(provenance)} if provenance else {}
    return (
        MemorySet(key=write.key, value=value, metadata=meta),
        SlotSet(name=write.key, value=value, filled_by=filled_by),
    )


def rollback_events(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[Event, ...]:
    """Events that take memory from `after` back to the snapshot `before`."""
    events: list[Event] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if old is None:
            events.append(MemoryCleared(key=key))
        else:
            value = freeze_json(old)
            events.append(MemorySet(key=key, value=value, metadata={"rollback": True}))
            events.append(SlotSet(name=key, value=value, filled_by="rollback"))
    return tuple(events)


class ToolMemory:
    """`context.memory` for one tool run: checked, coerced, immediately visible writes."""

    def __init__(
        self,
        *,
        schema: MemorySchema,
        memory: Mapping[str, object],
        active_skill: str | None,
        filled_by: str,
        writer: Writer = "tool",
    ) -> None:
        self._schema = schema
        # A read-only mapping is copied only on the first write (most runs write nothing).
        self._memory: Mapping[str, object] = (
            memory if type(memory) is MappingProxyType else dict(memory)
        )
        self._active = active_skill
        self._filled_by = filled_by
        self._writer: Writer = writer
        self.pending: list[Event] = []
        """Events for the writes made so far, not yet flushed to the log."""

    def get(self, key: str) -> Any:
        """Current value of `key` (bare: active skill first, then project)."""
        field = self._schema.resolve(key, self._active)
        return None if field is None else self._memory.get(field.key)

    def set(self, key: str, value: Any) -> None:
        """Write `key`; an out-of-contract write raises `ToolError` in the tool."""
        planned = plan_write(self._schema, self._memory, key, value, self._writer, self._active)
        if isinstance(planned, Refusal):
            raise MemoryWriteRefused(planned)
        memory = self._memory
        if type(memory) is not dict:
            memory = self._memory = dict(memory)
        memory[planned.key] = planned.value
        self.pending.extend(write_events(planned, filled_by=self._filled_by))

    def clear(self, key: str) -> None:
        """Clear `key`."""
        self.set(key, None)

    def take(self) -> list[Event]:
        """Hand over the pending events (the engine appends them)."""
        events, self.pending = self.pending, []
        return events
