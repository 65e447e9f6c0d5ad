"""Turning the literals of an executed plan into slots (the template compiler's core, §3.6).

`SlotBuilder.argument` walks one argument value under its contract binding:

* `structural` (and the plan's own `from_step`): kept as written; only a calendar date in
  it stops caching (`absolute_time`);
* `runtime` / `piped`: must already be refs (`${RUNTIME:...}`, `${stepN...}`); a `runtime`
  literal equal to a memory value becomes `${MEMORY:key}`; any other literal stops caching
  (`runtime_literal`);
* `request` (also every argument with no declared binding): each literal string or number
  is aligned to a span of the request and becomes `${SLOT:name}`; one that does not align
  is classified by `keel.plans.provenance`: equal to one memory value, it becomes
  `${MEMORY:key}` (re-resolved in the memory of whoever the plan serves); found elsewhere
  in the conversation (earlier turns, other memory, an earlier step's output of this turn)
  and not one of the argument's enum values, it stops caching (`context_value`); else it is
  a constant, which stops caching when the step is effectful
  (`unaligned_effectful_literal`) and otherwise makes the template exact-only. A date
  aligned to the request stops caching too unless the compiler allows request dates; a
  date, time or timestamp that aligns to nothing always does (it came from a clock:
  `absolute_time`). A filler in an effectful step stops caching
  (the effect gate would refuse it on every hit).

Strings with refs keep their refs; their literal pieces follow the same rules. Lists and
objects are walked item by item (slot names `arg_2`, `arg_key`). One request span said once
is one slot, however many arguments use it. Pure (the builder is local to one compile).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from keel.plans.entities import has_absolute_time, has_clock_time, looks_like_epoch
from keel.plans.plan import Slot
from keel.plans.provenance import NO_CONTEXT, RecordContext
from keel.plans.refs import BadRef, FillerRef, SlotRef, find_refs
from keel.plans.slots import SlotMatch, align

PLAN_ARGS = frozenset({"from_step", "from_steps"})
"""Arguments that are plan structure whatever the contract says."""


class Stop(Exception):
    """The plan cannot be cached; `reason` is the `Uncacheable` reason code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, kw_only=True, slots=True)
class Where:
    """The argument being compiled."""

    step: int
    name: str
    binding: str
    effectful: bool
    enum: tuple[str, ...] = ()


class SlotBuilder:
    """Collects the slots of one template while its arguments are compiled."""

    def __init__(
        self,
        request: str,
        *,
        declared: Mapping[str, Slot],
        request_dates: bool,
        gazetteers: Mapping[str, Sequence[str]],
        context: RecordContext = NO_CONTEXT,
    ) -> None:
        self.request = request
        self.context = context
        self.declared = declared
        self.request_dates = request_dates
        self.gazetteers = gazetteers
        self.slots: dict[str, Slot] = {}
        self.bindings: dict[str, object] = {}
        self.spans: dict[str, tuple[int, int]] = {}
        self.exact_only = False
        self._by_span: dict[tuple[int, int, str], str] = {}

    # --- arguments --------------------------------------------------------------------------

    def argument(self, value: object, where: Where, name: str) -> object:
        """The template form of one argument value (raises `Stop`)."""
        if where.binding == "structural" or where.name in PLAN_ARGS:
            self._structural(value, where)
            return value
        if value is None or value == "" or value == [] or value == {}:
            return value
        if isinstance(value, Mapping):
            return {k: self.argument(v, where, f"{name}_{k}") for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.argument(v, where, f"{name}_{i}") for i, v in enumerate(value, 1)]
        if isinstance(value, str) and find_refs(value):
            return self._with_refs(value, where, name)
        if where.binding in ("runtime", "piped"):
            key = self.context.memory_key(value) if where.binding == "runtime" else None
            if key is None:
                detail = f"step {where.step} {where.name}: {value!r} is no ref"
                raise Stop("runtime_literal", detail)
            return "${MEMORY:" + key + "}"
        return self._literal(value, where, name)

    def _structural(self, value: object, where: Where) -> None:
        if isinstance(value, str) and has_absolute_time(value):
            raise Stop("absolute_time", f"step {where.step} {where.name}: {value!r}")
        if isinstance(value, Mapping):
            for item in value.values():
                self._structural(item, where)
        elif isinstance(value, list | tuple):
            for item in value:
                self._structural(item, where)

    def _with_refs(self, value: str, where: Where, name: str) -> str:
        out: list[str] = []
        position = 0
        for found in find_refs(value):
            out.append(self._piece(value[position : found.start], where, name))
            self.check_ref(found.ref, where)
            out.append(value[found.start : found.end])
            position = found.end
        out.append(self._piece(value[position:], where, name))
        return "".join(out)

    def check_ref(self, ref: object, where: Where | None) -> None:
        """A ref the template may keep (raises `Stop` for one it may not)."""
        if isinstance(ref, SlotRef) and ref.name not in self.declared:
            raise Stop("undeclared_slot", f"${{SLOT:{ref.name}}} has no declaration")
        if isinstance(ref, SlotRef):
            self.slots.setdefault(ref.name, self.declared[ref.name])
        if where is not None and where.effectful and isinstance(ref, FillerRef | BadRef):
            raise Stop(
                "unaligned_effectful_literal",
                f"step {where.step} {where.name}: a model-written value in an effectful step",
            )

    def _piece(self, text: str, where: Where, name: str) -> str:
        core = text.strip(" \t\n,.;:!?-()[]\"'")
        if not any(c.isalnum() for c in core):
            return text
        if where.binding in ("runtime", "piped"):
            raise Stop("runtime_literal", f"step {where.step} {where.name}: text {core!r}")
        slotted = self._literal(core, where, name)
        if slotted == core:
            return text
        start = text.index(core)
        return text[:start] + str(slotted) + text[start + len(core) :]

    def _literal(self, value: object, where: Where, name: str) -> object:
        match = align(value, self.request)
        if match is not None:
            if match.type.startswith("date") and not self.request_dates:
                raise Stop("absolute_time", f"step {where.step} {where.name}: date {value!r}")
            return self.slot_ref(name, self._typed(match, where))
        key = self.context.memory_key(value)
        if key is not None:
            return "${MEMORY:" + key + "}"  # re-resolved in the next customer's memory
        if value not in where.enum and self.context.seen(value, before_step=where.step):
            raise Stop(
                "context_value",
                f"step {where.step} {where.name}: {value!r} came from the conversation",
            )
        if isinstance(value, str) and has_clock_time(value):
            raise Stop("absolute_time", f"step {where.step} {where.name}: {value!r}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            if looks_like_epoch(value):
                raise Stop("absolute_time", f"step {where.step} {where.name}: {value!r}")
        if where.effectful:
            raise Stop(
                "unaligned_effectful_literal",
                f"step {where.step} {where.name}: {value!r} is not in the request",
            )
        self.exact_only = True
        return value

    def _typed(self, match: SlotMatch, where: Where) -> SlotMatch:
        if not match.type.startswith("text") or not isinstance(match.value, str):
            return match
        if match.value in where.enum and "|" not in match.value:
            return _retype(match, "enum:" + "|".join(where.enum))
        for listed, names in sorted(self.gazetteers.items()):
            if match.value in names:
                return _retype(match, f"name:{listed}")
        return match

    # --- slots ------------------------------------------------------------------------------

    def slot_ref(self, base: str, match: SlotMatch) -> str:
        """`${SLOT:name}` for the span of `match` (a new slot, or the span's existing one)."""
        key = (match.start, match.end, match.type)
        name = self._by_span.get(key)
        if name is None:
            name = _fresh(_ident(base), {**self.declared, **self.slots})
            self.slots[name] = Slot(type=match.type, required=True, source=match.text)
            self.bindings[name] = match.value
            self.spans[name] = (match.start, match.end)
            self._by_span[key] = name
        return "${SLOT:" + name + "}"


def _retype(match: SlotMatch, kind: str) -> SlotMatch:
    return SlotMatch(
        type=kind, value=match.value, start=match.start, end=match.end, text=match.text
    )


def _ident(base: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", base).strip("_") or "slot"
    return name if not name[0].isdigit() else f"s_{name}"


def _fresh(name: str, taken: Mapping[str, object]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"
