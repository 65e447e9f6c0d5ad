"""Resolving a step's argument template into values, each with its provenance (spec §3.4, §3.6).

    env = ResolveEnv(outputs={1: result}, runtime={"actor": "ann"}, fillers={},
                     slots={"user": "ann@example.com"}, served=True)
    resolved = resolve_args(step, contract, env, parameters=tool.parameters)
    if isinstance(resolved, PlanError): ...            # plan.unresolved, plan.from_step_invalid
    args, provenance = resolved                         # {"user": ...}, {"user": "request_span"}

Every value carries one tag saying where it came from: `${SLOT:x}` is a span of the current
request (`request_span`), `${RUNTIME:k}` the authenticated context (`runtime`),
`${MEMORY:ns.entry}` the memory of the conversation the plan runs in (`memory`: the value a
recorded plan took from its customer's memory, read again for the current one; the runtime
carries it under `memory:<key>`, see `keel.plans.provenance`), `${stepN.p}`
and `from_step` piping an output of this turn (`step_output`), `${FILLER:x}` the fast model
(`filler_llm`). A literal is a `contract_const` when its argument's binding is structural,
else a `cache_literal` in a served plan and `proposed` in a fresh one. Only the tags in
`SAFE_FOR_EFFECTS` may reach an effectful step of a served plan (the executor's effect gate).

A full-match ref keeps the value's native type; refs embedded in text render as text and the
string takes the weakest tag of its parts (literal text counts as a part unless it is only
spaces and punctuation). Lists and objects take the weakest tag of their items.

Lenient path fallbacks (`keel.plans.paths`) apply only to read-only consumers. An effectful
consumer gets exact paths, and any argument it cannot resolve is an error, required or not
(dropping an optional filter could widen a write); a read-only consumer drops unresolved
optional arguments. Arguments starting with `_` and `runtime_resolved` arguments set by the
plan are dropped: the runtime fills them (here from `runtime` when it has the name). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final, Literal

from keel.plans.paths import MISSING, as_text, list_of, walk
from keel.plans.piping import PIPE_KEY, pipe_source, pipe_target
from keel.plans.plan import PlanError, Step
from keel.plans.provenance import MEMORY_PREFIX
from keel.plans.refs import (
    FillerRef,
    MemoryRef,
    Ref,
    RuntimeRef,
    SlotRef,
    StepRef,
    find_refs,
    full_ref,
    refs_in,
    render_ref,
)
from keel.tools.contract import Binding, ToolContract
from keel.tools.frozen import thaw_json

Provenance = Literal[
    "request_span",
    "runtime",
    "memory",
    "step_output",
    "contract_const",
    "filler_llm",
    "cache_literal",
    "proposed",
]
SAFE_FOR_EFFECTS: Final[frozenset[Provenance]] = frozenset(
    {"request_span", "runtime", "memory", "step_output", "contract_const"}
)
"""What an effectful step of a served plan may receive."""

_STRENGTH: Final[Mapping[Provenance, int]] = {
    "cache_literal": 0,
    "filler_llm": 1,
    "proposed": 2,
    "contract_const": 3,
    "memory": 4,
    "runtime": 5,
    "step_output": 6,
    "request_span": 7,
}
_SHIFT: Final = re.compile(r"now_(plus|minus)_([0-9]+)([dh])")
_ALNUM: Final = re.compile(r"\w")


@dataclass(frozen=True, kw_only=True, slots=True)
class Tagged:
    """A resolved value and where it came from."""

    value: object
    tag: Provenance


@dataclass(frozen=True, kw_only=True, slots=True)
class ResolveEnv:
    """What refs resolve against."""

    outputs: Mapping[int, object]
    """Step id -> output of the steps that succeeded in this turn."""
    runtime: Mapping[str, object]
    fillers: Mapping[str, str]
    slots: Mapping[str, object]
    served: bool
    """The plan came from the cache: its literals are `cache_literal`, else `proposed`."""


def weakest(tags: Iterable[Provenance], default: Provenance) -> Provenance:
    """The least trusted of `tags` (`default` when there are none)."""
    return min(tags, key=_STRENGTH.__getitem__, default=default)


def literal_tag(binding: Binding, *, served: bool) -> Provenance:
    """The tag of a literal written in the plan for an argument with `binding`."""
    if binding == "structural":
        return "contract_const"
    return "cache_literal" if served else "proposed"


def resolve_args(
    step: Step,
    contract: ToolContract,
    env: ResolveEnv,
    *,
    parameters: Mapping[str, object] | None = None,
) -> tuple[dict[str, object], dict[str, Provenance]] | PlanError:
    """The step's arguments resolved, with a tag per argument, or the first error.

    `parameters` (the tool's JSON Schema) says which arguments are required and which one
    takes piped lists; without it every argument counts as required (fail closed)."""
    lenient = not contract.effectful
    required = _required(parameters, step.args)
    args: dict[str, object] = {}
    tags: dict[str, Provenance] = {}
    for name, raw in step.args.items():
        if name == PIPE_KEY or name.startswith("_") or name in contract.runtime_resolved:
            continue
        literal = literal_tag(contract.binding(name), served=env.served)
        tagged = resolve_value(raw, literal=literal, env=env, lenient=lenient)
        if tagged is None:
            if name in required or not lenient:
                return _unresolved(step, name, raw)
            continue
        args[name], tags[name] = thaw_json(tagged.value), tagged.tag
    piped = _pipe(step, contract, env, parameters)
    if isinstance(piped, PlanError):
        return piped
    if piped is not None:
        args[piped[0]], tags[piped[0]] = piped[1].value, piped[1].tag
    for name in sorted(contract.runtime_resolved):
        if env.runtime.get(name) not in (None, ""):
            args[name], tags[name] = thaw_json(env.runtime[name]), "runtime"
    return args, tags


def resolve_value(
    value: object, *, literal: Provenance, env: ResolveEnv, lenient: bool
) -> Tagged | None:
    """A JSON template value resolved (None when a ref in it cannot be)."""
    if isinstance(value, str):
        return resolve_text(value, literal=literal, env=env, lenient=lenient)
    if isinstance(value, Mapping):
        items = {
            k: resolve_value(v, literal=literal, env=env, lenient=lenient) for k, v in value.items()
        }
        if any(v is None for v in items.values()):
            return None
        found = [v for v in items.values() if v is not None]
        tag = weakest((v.tag for v in found), literal)
        return Tagged(value={k: v.value for k, v in items.items() if v is not None}, tag=tag)
    if isinstance(value, list | tuple):
        elements = [resolve_value(v, literal=literal, env=env, lenient=lenient) for v in value]
        present = [e for e in elements if e is not None]
        if len(present) < len(elements):
            return None
        return Tagged(
            value=[e.value for e in present], tag=weakest((e.tag for e in present), literal)
        )
    return Tagged(value=value, tag=literal)


def resolve_text(
    text: str, *, literal: Provenance, env: ResolveEnv, lenient: bool
) -> Tagged | None:
    """A string: one full ref keeps its native value, embedded refs render as text."""
    whole = full_ref(text)
    if whole is not None:
        return resolve_ref(whole, env, lenient=lenient)
    located = find_refs(text)
    if not located:
        return Tagged(value=text, tag=literal)
    parts: list[str] = []
    tags: list[Provenance] = []
    position = 0
    for found in located:
        resolved = resolve_ref(found.ref, env, lenient=lenient)
        if resolved is None:
            return None
        between = text[position : found.start]
        parts += [between, as_text(resolved.value)]
        tags += [resolved.tag, *([literal] if _ALNUM.search(between) else [])]
        position = found.end
    tail = text[position:]
    tags += [literal] if _ALNUM.search(tail) else []
    return Tagged(value="".join(parts) + tail, tag=weakest(tags, literal))


def resolve_ref(ref: Ref, env: ResolveEnv, *, lenient: bool) -> Tagged | None:
    """One ref's value, or None when it cannot be resolved (bad refs never resolve)."""
    if isinstance(ref, StepRef):
        if ref.step not in env.outputs:
            return None
        found = walk(env.outputs[ref.step], ref.path, lenient=lenient)
        return None if found is MISSING else Tagged(value=found, tag="step_output")
    if isinstance(ref, SlotRef):
        value = env.slots.get(ref.name, MISSING)
        return None if value is MISSING else Tagged(value=value, tag="request_span")
    if isinstance(ref, RuntimeRef):
        value = runtime_value(ref.key, env.runtime)
        return None if value is None else Tagged(value=value, tag="runtime")
    if isinstance(ref, MemoryRef):
        value = env.runtime.get(MEMORY_PREFIX + ref.key)
        return None if value in (None, "") else Tagged(value=value, tag="memory")
    if isinstance(ref, FillerRef):
        text = env.fillers.get(ref.name)
        return None if text is None else Tagged(value=text, tag="filler_llm")
    return None


def runtime_value(key: str, runtime: Mapping[str, object]) -> object | None:
    """A runtime key's value; time keys derive from `now` when not given. Empty is None."""
    value = runtime.get(key)
    if value not in (None, ""):
        return value
    now = runtime.get("now")
    if key == "today" and isinstance(now, datetime):
        return now.date().isoformat()
    shift = _SHIFT.fullmatch(key)
    if shift is None or now in (None, "") or isinstance(now, bool):
        return None
    hours = int(shift.group(2)) * (24 if shift.group(3) == "d" else 1)
    sign = 1 if shift.group(1) == "plus" else -1
    if isinstance(now, datetime):
        return (now + sign * timedelta(hours=hours)).isoformat()
    if isinstance(now, date):
        return (now + sign * timedelta(days=hours // 24)).isoformat()
    if isinstance(now, int | float):
        return now + sign * hours * 3600
    return None


def _pipe(
    step: Step, contract: ToolContract, env: ResolveEnv, parameters: Mapping[str, object] | None
) -> tuple[str, Tagged] | PlanError | None:
    source = pipe_source(step)
    if source is None or isinstance(source, PlanError):
        return source
    target = pipe_target(contract, parameters)
    if target in step.args:
        return None  # an explicit argument wins over piping
    items = list_of(env.outputs.get(source), lenient=not contract.effectful)
    if items is None:
        return PlanError(
            code="plan.unresolved",
            step=step.id,
            argument=target,
            message=f"step {source} produced no list to pipe into {target!r}",
        )
    return target, Tagged(value=thaw_json(items), tag="step_output")


def _required(
    parameters: Mapping[str, object] | None, args: Mapping[str, object]
) -> frozenset[str]:
    if parameters is None:
        return frozenset(args)
    required = parameters.get("required")
    if not isinstance(required, list | tuple):
        return frozenset()
    return frozenset(str(n) for n in required)


def _unresolved(step: Step, name: str, raw: object) -> PlanError:
    refs = ", ".join(render_ref(ref) for ref in refs_in(raw)) or "the value"
    return PlanError(
        code="plan.unresolved",
        step=step.id,
        argument=name,
        message=f"{refs} has no value; refer to an earlier step's existing output, "
        "a declared slot, a filler or a known runtime key",
    )
