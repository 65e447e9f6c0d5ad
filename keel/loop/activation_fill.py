"""Facts the activating message already holds: a new skill's collect entries filled at once.

When a message starts a skill, the values it holds for that skill's `collect` entries are
written right after the activation, before the deterministic pass reaches the first
collect; a collect whose value is known is not asked (`keel.loop.blocks_run`). So "can I
extend my loan on B-10002" is not met with "Which book?".

* **The model's `activate` call** may carry them as `fields` (the tool's schema lists each
  target skill's collect entries, `keel.loop.offer`). Each is checked and written as
  `set_fields` writes: writer `llm`, the skill's collect entries owned, coerced to the
  entry's type, the entry's post-write hook run, rolled back when it rejects. A write is
  recorded as `memory_set` with `metadata.provenance.source: activate` (and the call's id)
  plus `slot_set` with `filled_by: activate`. A value refused (by the rules or by the
  hook) is recorded as `tool_call_refused` on the `activate` call, with its code, and is
  named in the call's result; its entry stays unset, so its collect asks as before.
* **The typed extractors** (`keel.extract`), where extraction runs
  (`extraction.enabled`; under `auto` only with no model): the entries with an explicit
  `extract:` attribute, still unset, are read from the message, recorded with
  `filled_by: extractor` and `provenance.source: extracted`. The type-implied extractors
  (`number`, `yes_no`, `enum`) wait for the collect's own question: a request that starts a
  skill ("renew my 2 books") is not an answer to it. A hook rejection is recorded as
  `tool_call_refused` with `tool_name: extract`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from keel.events.model import ToolCallRefused
from keel.extract import Found
from keel.extract.fill import extract
from keel.llm.port import ToolCall
from keel.loop.memory_ops import Refusal, plan_write
from keel.loop.offer import collect_fields
from keel.loop.outcome import refuse
from keel.loop.post_write import write_with_hook
from keel.loop.tools_run import CallSite
from keel.loop.turn import TurnContext

HOOK_REJECTED = "memory.write.hook_rejected"
"""The code of a value the entry's post-write hook rejected (its message follows)."""
EXTRACT = "extract"
"""The `tool_name` a refused extracted value is recorded under."""
NOT_APPLIED = "tool.activate.fields_not_applied"
"""`fields` on an `activate` that enters a block or resumes a parked skill: not written."""


async def fill_given(
    t: TurnContext, skill_id: str, given: object, call: ToolCall, site: CallSite
) -> list[str]:
    """Write the values the model's `activate` of `skill_id` carried; returns a line per
    value not written (for the call's result)."""
    skill = t.definition.skill(skill_id)
    if skill is None or not isinstance(given, Mapping):
        return []
    owned = frozenset(f.name for f in collect_fields(t.definition, skill))
    problems: list[str] = []
    for name, value in given.items():
        planned = plan_write(
            t.definition.memory, t.state.memory, str(name), value, "llm", skill_id, owned
        )
        if isinstance(planned, Refusal):
            await refuse(t, call, planned.code, planned.message, batch=site.batch_id)
            problems.append(f"{name}: {planned.message}")
            continue
        provenance = {"source": "activate", "tool_call_id": site.call_id}
        rejected = await write_with_hook(t, planned, filled_by="activate", provenance=provenance)
        if rejected is not None:
            message = f"{name}: {rejected.message or 'rejected'}"
            await refuse(t, call, HOOK_REJECTED, message, batch=site.batch_id)
            problems.append(message)
    return problems


async def not_applied(t: TurnContext, given: object, call: ToolCall, site: CallSite) -> str | None:
    """`fields` given to an `activate` that starts no skill: refused, the reason returned."""
    if not isinstance(given, Mapping) or not given:
        return None
    message = "fields are recorded only when activate starts a skill; use set_fields"
    await refuse(t, call, NOT_APPLIED, message, batch=site.batch_id)
    return message


async def fill_extracted(t: TurnContext, skill_id: str) -> int:
    """Fill the unset collect entries of `skill_id` that have an `extract:` from the
    current message; returns how many were written."""
    skill = t.definition.skill(skill_id)
    if skill is None:
        return 0
    fields = collect_fields(t.definition, skill)
    owned = frozenset(f.name for f in fields)
    written = 0
    for field in fields:
        if field.extract is None or t.state.memory.get(field.key) is not None:
            continue
        found = extract(field, field.extract, t.user_text, t.definition.root)
        if not isinstance(found, Found):
            continue  # nothing, several values, or one that does not fit the type
        planned = plan_write(
            t.definition.memory, t.state.memory, field.name, found.value, "llm", skill_id, owned
        )
        if isinstance(planned, Refusal):
            await _refused_extraction(t, skill_id, field.name, found.value, planned)
            continue
        provenance = {"source": "extracted", "extractor": field.extract.kind}
        rejected = await write_with_hook(t, planned, filled_by="extractor", provenance=provenance)
        if rejected is None:
            written += 1
        else:
            refusal = Refusal(code=HOOK_REJECTED, message=rejected.message or "rejected")
            await _refused_extraction(t, skill_id, field.name, found.value, refusal)
    return written


async def _refused_extraction(
    t: TurnContext, skill_id: str, entry: str, value: object, refusal: Refusal
) -> None:
    # On record like a refused `set_memory` step: the entry and value as the arguments.
    await t.emit(
        ToolCallRefused(
            tool_name=EXTRACT,
            arguments=json.dumps(
                {entry: value}, separators=(",", ":"), ensure_ascii=False, default=str
            ),
            code=refusal.code,
            message=f"{entry}: {refusal.message}",
            tool_call_id=f"extract:{skill_id}:{entry}",
        )
    )
