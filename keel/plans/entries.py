"""Cache rows built and read back (plan-cache spec §3.7, §3.15): L0 and L1 entries,
observations, and the record of where an observation's template came from.

* L0 key: `keel.plans.normalise.l0_key` (normaliser version, language, scope, normalised
  request); id `l0-<key>`.
* L1 key: `<intent signature>|<slot signature>|<shape hash>` (a store keeps one row per
  key, and several shapes may compete for an intent); id `l1-` + 16 hex of its hash.
* An observation holds its template (`plan_json`) and, in its own fields, the `Source` of
  the template (the request, intent, slot signature and bindings, the signatures at record
  time, whether it is exact-only, the L0 entry written for the request, the layer that
  served the turn), so feedback can promote it without the catalog and delete the serving
  L0 entry on a reject, and the store can count its signals without reading any JSON.
* `request_text` holds the recorded request as said (not normalised): the binder locates
  slot sources, entities and negations in it.

Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final

from keel.plans.admission import Candidate
from keel.plans.catalog import Catalog
from keel.plans.compiler import CONTEXT_BOUND, Compiled, Uncacheable, compile_plan
from keel.plans.intent import Intent
from keel.plans.plan import Plan, parse_plan, shape_hash
from keel.plans.provenance import NO_CONTEXT, RecordContext
from keel.plans.store_port import Layer, Observation, TemplateRow


@dataclass(frozen=True, kw_only=True, slots=True)
class CompileOptions:
    """How templates are compiled and bound (`keel.plans.compiler`, `keel.plans.slots`)."""

    context_bound: frozenset[str] = CONTEXT_BOUND
    """Tools whose plans are never cached."""
    request_dates: bool = False
    """A calendar date the user wrote may become a `date` slot (else: uncacheable)."""
    gazetteers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """List name -> names, for `name:<list>` slots."""

    def compile(
        self,
        executed: Plan,
        *,
        request: str,
        catalog: Catalog,
        intent: Intent,
        context: RecordContext = NO_CONTEXT,
    ) -> Compiled | Uncacheable:
        """`compile_plan` with these options (`context`: what the conversation held)."""
        return compile_plan(
            executed,
            request=request,
            catalog=catalog,
            intent=intent,
            context_bound=self.context_bound,
            request_dates=self.request_dates,
            gazetteers=self.gazetteers,
            context=context,
        )


DEFAULT_OPTIONS: Final = CompileOptions()
"""The spec defaults."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where a template came from (stored with each observation)."""

    request: str
    """The recorded request, as said (the binder reads it: slot sources, polarity, coverage)."""
    intent: Intent
    slot_sig: str
    bindings: Mapping[str, object]
    tools_sig: str
    pool_sig: str
    logic_sig: str
    effectful: bool
    exact_only: bool = False
    l0_id: str | None = None
    served: str = ""
    """`l0`, `l1`, or empty for a planned turn."""
    origin: str = "planner"


def l1_key(intent_sig: str, slot_sig: str, shape: str) -> str:
    """The L1 key of a template."""
    return f"{intent_sig}|{slot_sig}|{shape}"


def l1_id(scope: str, key: str) -> str:
    """The id of the L1 entry with `key` in `scope`."""
    return "l1-" + hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()[:16]


def l0_row(*, key: str, scope: str, plan: Plan, source: Source, now: float) -> TemplateRow:
    """The L0 entry of a request."""
    return _row(
        entry_id=f"l0-{key}",
        layer="l0",
        scope=scope,
        key=key,
        plan=plan.dumps(),
        shape=shape_hash(plan),
        source=source,
        now=now,
    )


def l1_row(*, scope: str, plan_json: str, shape: str, source: Source, now: float) -> TemplateRow:
    """An L1 entry for a template (status `active`; feedback sets status and posterior)."""
    key = l1_key(source.intent.signature, source.slot_sig, shape)
    return _row(
        entry_id=l1_id(scope, key),
        layer="l1",
        scope=scope,
        key=key,
        plan=plan_json,
        shape=shape,
        source=source,
        now=now,
    )


def _row(
    *,
    entry_id: str,
    layer: Layer,
    scope: str,
    key: str,
    plan: str,
    shape: str,
    source: Source,
    now: float,
) -> TemplateRow:
    return TemplateRow(
        id=entry_id,
        layer=layer,
        scope=scope,
        key=key,
        intent_sig=source.intent.signature,
        slot_sig=source.slot_sig,
        shape_hash=shape,
        plan_json=plan,
        stored_intent_json=json.dumps(source.intent.to_json(), sort_keys=True),
        bindings_json=_dumps(source.bindings),
        request_text=source.request,
        tools_sig=source.tools_sig,
        pool_sig=source.pool_sig,
        logic_sig=source.logic_sig,
        effectful=source.effectful,
        origin=source.origin,
        created_at=now,
    )


def refreshed(row: TemplateRow, *, plan: Plan, source: Source, status: str) -> TemplateRow:
    """`row` re-validated by a fresh success: the new template, request, bindings and
    signatures (the posterior, counters and id are kept)."""
    return replace(
        row,
        status=status,  # type: ignore[arg-type]
        plan_json=plan.dumps(),
        bindings_json=_dumps(source.bindings),
        request_text=source.request,
        tools_sig=source.tools_sig,
        pool_sig=source.pool_sig,
        logic_sig=source.logic_sig,
    )


def observation_of(
    *, turn_id: str, scope: str, plan: Plan, source: Source, template_id: str | None, now: float
) -> Observation:
    """The observation of a turn that ran `plan` (a template) for `source.intent`."""
    return Observation(
        turn_id=turn_id,
        scope=scope,
        intent_sig=source.intent.signature,
        shape_hash=shape_hash(plan),
        plan_json=json.dumps(plan.to_json(), sort_keys=True, separators=(",", ":"), default=str),
        template_id=template_id,
        ts=now,
        slot_sig=source.slot_sig,
        request_text=source.request,
        stored_intent_json=json.dumps(source.intent.to_json(), sort_keys=True),
        bindings_json=_dumps(source.bindings),
        tools_sig=source.tools_sig,
        pool_sig=source.pool_sig,
        logic_sig=source.logic_sig,
        effectful=source.effectful,
        exact_only=source.exact_only,
        l0_id=source.l0_id,
        served=source.served,
        origin=source.origin,
    )


def source_of(observation: Observation) -> Source | None:
    """The source of an observation's template (None when none was recorded, or it is
    unreadable); the template itself is `observation.plan_json`."""
    if not observation.stored_intent_json:
        return None
    try:
        intent = Intent.from_json(json.loads(observation.stored_intent_json))
        bindings = json.loads(observation.bindings_json or "{}")
    except ValueError:
        return None
    return Source(
        request=observation.request_text,
        intent=intent,
        slot_sig=observation.slot_sig,
        bindings=MappingProxyType(bindings if isinstance(bindings, dict) else {}),
        tools_sig=observation.tools_sig,
        pool_sig=observation.pool_sig,
        logic_sig=observation.logic_sig,
        effectful=observation.effectful,
        exact_only=observation.exact_only,
        l0_id=observation.l0_id,
        served=observation.served,
        origin=observation.origin,
    )


def candidate_of(row: TemplateRow) -> Candidate | None:
    """A stored entry read back (None when its plan or fields are unreadable)."""
    plan, errors = parse_plan(row.plan_json)
    if plan is None or errors:
        return None
    try:
        intent = Intent.from_json(json.loads(row.stored_intent_json))
        bindings = json.loads(row.bindings_json or "{}")
    except ValueError:
        return None
    if not isinstance(bindings, dict):
        return None
    return Candidate(row=row, plan=plan, stored_intent=intent, bindings=MappingProxyType(bindings))


def _plain(values: Mapping[str, object]) -> dict[str, object]:
    return {
        k: v if isinstance(v, str | int | float | bool) or v is None else str(v)
        for k, v in values.items()
    }


def _dumps(values: Mapping[str, object]) -> str:
    return json.dumps(_plain(values), sort_keys=True)
