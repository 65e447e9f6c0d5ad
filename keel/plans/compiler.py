"""The template compiler (plan-cache spec §3.6): an executed plan -> a reusable template.

    compile_plan(plan_of("delete_task", {"task_id": 4}), request="delete task 4", ...)
      -> Compiled(template: delete_task(task_id=${SLOT:task_id}), bindings {task_id: 4},
                  slot_sig "number", effectful=True, exact_only=False)

Model-free, at record time. Default-deny: an argument with no declared binding is
`request`, so its literal must come from the request's words; the rules per binding are in
`keel.plans.slot_builder`. The result is `Uncacheable(reason)` when the plan must not be
cached at all (`no_tool_step`, `failed_step`, `unknown_tool`, `context_bound_tool`,
`runtime_literal`, `unaligned_effectful_literal`, `absolute_time`, `undeclared_slot`), and
`Compiled(exact_only=True)` when a read-only step holds a literal the request does not
say, or when the slots do not bind back on the request to the spans they came from: such a
template may serve the exact request again (L0) but never another (L1).

So no template ever holds a request literal in an effectful step: what an effectful step
gets on a hit comes from the new request's spans, the runtime, the memory of whoever it
serves (`${MEMORY:key}`), earlier steps or the contract. A literal that came from the
conversation and cannot be re-resolved (`keel.plans.provenance`) stops caching
(`context_value`).

The final message is rewritten too: the words of a slot's value become the slot, another
word of a slot's span becomes a companion slot of that span, and a date or a number the
request does not say is a baked result (absolute time: uncacheable; else exact only). A
final message that still holds, outside its refs, something of the conversation is
dropped (the template keeps an empty final message, so a served plan's answer is worded by
one model call from its results): a memory value; a word of a memory value (two letters
or more, not a function word), wherever it stands ("Lena, you have 3 orders"); a
capitalised word not starting a sentence that the context or the request holds (a name, a
street); a capitalised word starting a sentence that memory, an earlier user message or a
tool output holds; or a token with a digit or an `@` that the context holds. `slot_sig`
is the sorted slot types joined by commas. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final

from keel.plans.catalog import Catalog, PlanTool
from keel.plans.entities import find_entities
from keel.plans.intent import Intent
from keel.plans.plan import FINAL_ANSWER, Plan, Step
from keel.plans.provenance import (
    NO_CONTEXT,
    RecordContext,
    content_words,
    name_like,
    occurrence,
    sentence_starts,
)
from keel.plans.refs import find_refs
from keel.plans.slot_builder import SlotBuilder, Stop, Where
from keel.plans.slots import BindMiss, align, bind, occurrences
from keel.tools.frozen import freeze_json

CONTEXT_BOUND: Final = frozenset(
    {"undo", "undo_last_turn", "get_inputs", "get_input", "get_approval", "request_approval"}
    | {"ask_user", "open_sites", "login_sites", "read_sites", "delete_sites", "act_sites"}
)
"""Tools whose outcome depends on the conversation, not on the request (never cached)."""
CONTEXT_BOUND_VERBS: Final = frozenset({"undo"})
"""Name heads that make any tool context-bound."""
_RUN_META: Final = frozenset({"status", "failed_step"})
_SPECIFIC: Final = re.compile(r"[\w.+#-]*\d[\w.+#-]*|[\w.+-]+@[\w.-]+")
"""Tokens that carry a specific value (a digit, an e-mail address)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Compiled:
    """A cacheable template and what it was compiled from."""

    template: Plan
    bindings: Mapping[str, object]
    """Slot name -> the value the recorded request gave it."""
    slot_sig: str
    effectful: bool
    exact_only: bool
    """A read-only step holds an unaligned literal: exact (L0) reuse only, never L1."""
    spans: Mapping[str, tuple[int, int]] = field(default_factory=lambda: MappingProxyType({}))
    """Slot name -> its span in the recorded request."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Uncacheable:
    """Why the plan must not be cached."""

    reason: str
    detail: str = ""


def compile_plan(
    executed: Plan,
    *,
    request: str,
    catalog: Catalog,
    intent: Intent,
    context_bound: frozenset[str] = CONTEXT_BOUND,
    request_dates: bool = False,
    gazetteers: Mapping[str, Sequence[str]] | None = None,
    context: RecordContext = NO_CONTEXT,
) -> Compiled | Uncacheable:
    """The template of `executed` (the plan that ran for `request`), or why there is none.

    `request_dates=True` lets a calendar date the user wrote become a `date` slot (the spec
    default makes every absolute date uncacheable). `gazetteers` (list name -> names) type a
    word slot holding a listed name as `name:<list>`. `context` is what the conversation
    held besides the request (memory, earlier turns, this turn's outputs)."""
    refused = _refusal(executed, catalog, context_bound)
    if refused is not None:
        return refused
    builder = SlotBuilder(
        request,
        declared=executed.slots,
        request_dates=request_dates,
        gazetteers=gazetteers or {},
        context=context,
    )
    try:
        steps = tuple(_step(step, catalog, builder) for step in executed.steps)
        message = _message(executed.final_message, builder)
    except Stop as stop:
        return Uncacheable(reason=stop.reason, detail=stop.detail)
    meta = {k: v for k, v in executed.meta.items() if k not in _RUN_META}
    meta["intent_sig"] = intent.signature
    template = replace(
        executed,
        steps=steps,
        slots=MappingProxyType(dict(builder.slots)),
        final_message=message,
        meta=freeze_json(meta),  # type: ignore[arg-type]
    )
    return Compiled(
        template=template,
        bindings=MappingProxyType(dict(builder.bindings)),
        slot_sig=",".join(sorted(s.type for s in builder.slots.values())),
        effectful=any(catalog[s.tool].contract.effectful for s in executed.tool_steps),
        exact_only=builder.exact_only or not _binds_back(builder),
        spans=MappingProxyType(dict(builder.spans)),
    )


def _binds_back(builder: SlotBuilder) -> bool:
    """Whether the slots the compiler made bind back, on the request they came from, to the
    spans it recorded them from: one that does not ("alpha alpha and", a slot "and") would take
    another span of any other request too, so its template serves the exact request only."""
    if not builder.bindings:
        return True
    own = {name: builder.slots[name] for name in builder.bindings}
    request = builder.request
    again = bind(own, request, source_request=request, gazetteers=builder.gazetteers)
    if isinstance(again, BindMiss):
        # an ambiguous, retracted or id-less request is refused at serve time as well
        return again.reason != "binder_missing_slot"
    return all(again.spans.get(name) == span for name, span in builder.spans.items())


def _refusal(executed: Plan, catalog: Catalog, context_bound: frozenset[str]) -> Uncacheable | None:
    failed = executed.meta.get("failed_step")
    if failed is not None or executed.meta.get("status") not in (None, "ok"):
        return Uncacheable(reason="failed_step", detail=f"step {failed}")
    if not executed.tool_steps:
        return Uncacheable(reason="no_tool_step")
    for step in executed.tool_steps:
        tool = catalog.get(step.tool)
        if tool is None:
            return Uncacheable(reason="unknown_tool", detail=step.tool)
        if step.tool in context_bound or tool.verb in CONTEXT_BOUND_VERBS:
            return Uncacheable(reason="context_bound_tool", detail=step.tool)
    return None


def _step(step: Step, catalog: Catalog, builder: SlotBuilder) -> Step:
    if step.tool == FINAL_ANSWER:
        return step
    tool = catalog[step.tool]
    contract = tool.contract
    args: dict[str, object] = {}
    for name, value in step.args.items():
        if name in contract.runtime_resolved:
            continue  # the runtime fills it again from whoever asks next time
        where = Where(
            step=step.id,
            name=name,
            binding=contract.binding(name),
            effectful=contract.effectful,
            enum=_enum(tool, name),
        )
        args[name] = builder.argument(value, where, name)
    return replace(step, args=freeze_json(args))  # type: ignore[arg-type]


def _enum(tool: PlanTool, name: str) -> tuple[str, ...]:
    properties = tool.parameters.get("properties")
    spec = properties.get(name) if isinstance(properties, Mapping) else None
    values = spec.get("enum") if isinstance(spec, Mapping) else None
    if isinstance(values, list | tuple) and all(isinstance(v, str) for v in values):
        return tuple(values)
    return ()


def _message(text: str, builder: SlotBuilder) -> str:
    if not text:
        return text
    exact_only = builder.exact_only
    message = _slotted(text, builder)
    if _holds_context(message, builder):
        builder.exact_only = exact_only  # the dropped message bakes nothing
        return ""
    return message


def _holds_context(message: str, builder: SlotBuilder) -> bool:
    """The message's literal text holds something of the conversation (module docstring)."""
    literal = message
    for found in reversed(find_refs(message)):
        literal = literal[: found.start] + " " + literal[found.end :]
    context = builder.context
    if any(occurrence(value).search(literal) for value in context.memory_texts()):
        return True
    if content_words(literal) & context.memory_words():
        return True  # "Lena, you have 3 orders": a word of a memory value, wherever it stands
    words = context.words(builder.request)
    if any(word.lower() in words for word in name_like(literal)):
        return True
    sources = context.source_words()
    if any(word.casefold() in sources for word in sentence_starts(literal)):
        return True
    return any(context.seen(token.strip(".")) for token in _SPECIFIC.findall(literal))


def _slotted(text: str, builder: SlotBuilder) -> str:
    out: list[str] = []
    position = 0
    for found in find_refs(text):
        out.append(_prose(text[position : found.start], builder))
        builder.check_ref(found.ref, None)
        out.append(text[found.start : found.end])
        position = found.end
    out.append(_prose(text[position:], builder))
    return "".join(out)


def _prose(text: str, builder: SlotBuilder) -> str:
    """Literal message text with slot values made slots and baked values refused."""
    marks: list[tuple[int, int, str]] = []
    for name in sorted(builder.slots, key=lambda n: -len(str(builder.bindings.get(n, "")))):
        if name not in builder.bindings:
            continue
        for start, end in occurrences(str(builder.bindings[name]), text):
            if not _overlaps(marks, start, end):
                marks.append((start, end, "${SLOT:" + name + "}"))
    for entity in find_entities(text):
        if _overlaps(marks, entity.start, entity.end):
            continue
        ref = _message_entity(entity.text, entity.kind, builder)
        if ref is not None:
            marks.append((entity.start, entity.end, ref))
    out, position = [], 0
    for start, end, ref in sorted(marks):
        out.append(text[position:start] + ref)
        position = end
    return "".join(out) + text[position:]


def _message_entity(text: str, kind: str, builder: SlotBuilder) -> str | None:
    match = align(text, builder.request)
    if match is None:
        if kind in ("date", "time"):
            raise Stop("absolute_time", f"final message: {text!r}")
        builder.exact_only = True
        return None
    for name, (start, end) in builder.spans.items():
        if start < match.end and match.start < end:
            return builder.slot_ref(name, match)
    return None  # said by the request but no slot: coverage keeps the request the same


def _overlaps(marks: list[tuple[int, int, str]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e, _ in marks)
