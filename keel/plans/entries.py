"""Cache rows built and read back (plan-cache spec §3.7, §3.15): L0 and L1 entries,
observations, and the record of where an observation's template came from.

* L0 key: `keel.plans.normalise.l0_key` (normaliser version, language, scope, normalised
  request); id `l0-<key>`.
* L1 key: `<intent signature>|<slot signature>|<shape hash>` (a store keeps one row per
  key, and several shapes may compete for an intent); id `l1-` + 16 hex of its hash.
* An observation's plan carries, under `meta.cache`, the `Source` of its template (the
  normalised request, intent, slot signature and bindings, the signatures at record time,
  the L0 entry written for the request, the layer that served the turn), so feedback can
  promote it without the catalog and delete the serving L0 entry on a reject.
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
from keel.plans.store_port import Observation, TemplateRow

META_KEY: Final = "cache"


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
        self, executed: Plan, *, request: str, catalog: Catalog, intent: Intent
    ) -> Compiled | Uncacheable:
        """`compile_plan` with these options."""
        return compile_plan(
            executed,
            request=request,
            catalog=catalog,
            intent=intent,
            context_bound=self.context_bound,
            request_dates=self.request_dates,
            gazetteers=self.gazetteers,
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

    def to_json(self) -> dict[str, object]:
        """The stored form."""
        return {
            "request": self.request,
            "intent": self.intent.to_json(),
            "slot_sig": self.slot_sig,
            "bindings": _plain(self.bindings),
            "tools_sig": self.tools_sig,
            "pool_sig": self.pool_sig,
            "logic_sig": self.logic_sig,
            "effectful": self.effectful,
            "exact_only": self.exact_only,
            "l0_id": self.l0_id,
            "served": self.served,
            "origin": self.origin,
        }

    @staticmethod
    def from_json(raw: Mapping[str, object]) -> Source:
        """Read the stored form (missing fields read as empty)."""
        bindings = raw.get("bindings")
        l0_id = raw.get("l0_id")
        return Source(
            request=str(raw.get("request", "")),
            intent=Intent.from_json(raw.get("intent")),
            slot_sig=str(raw.get("slot_sig", "")),
            bindings=MappingProxyType(dict(bindings) if isinstance(bindings, Mapping) else {}),
            tools_sig=str(raw.get("tools_sig", "")),
            pool_sig=str(raw.get("pool_sig", "")),
            logic_sig=str(raw.get("logic_sig", "")),
            effectful=raw.get("effectful") is not False,
            exact_only=raw.get("exact_only") is True,
            l0_id=l0_id if isinstance(l0_id, str) else None,
            served=str(raw.get("served", "")),
            origin=str(raw.get("origin", "planner")),
        )


def l1_key(intent_sig: str, slot_sig: str, shape: str) -> str:
    """The L1 key of a template."""
    return f"{intent_sig}|{slot_sig}|{shape}"


def l1_id(scope: str, key: str) -> str:
    """The id of the L1 entry with `key` in `scope`."""
    return "l1-" + hashlib.sha256(f"{scope}\0{key}".encode()).hexdigest()[:16]


def l0_row(*, key: str, scope: str, plan: Plan, source: Source, now: float) -> TemplateRow:
    """The L0 entry of a request."""
    return TemplateRow(
        id=f"l0-{key}",
        layer="l0",
        scope=scope,
        key=key,
        intent_sig=source.intent.signature,
        slot_sig=source.slot_sig,
        shape_hash=shape_hash(plan),
        plan_json=plan.dumps(),
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


def l1_row(*, scope: str, plan_json: str, shape: str, source: Source, now: float) -> TemplateRow:
    """An L1 entry for a template (status `active`; feedback sets status and posterior)."""
    key = l1_key(source.intent.signature, source.slot_sig, shape)
    return TemplateRow(
        id=l1_id(scope, key),
        layer="l1",
        scope=scope,
        key=key,
        intent_sig=source.intent.signature,
        slot_sig=source.slot_sig,
        shape_hash=shape,
        plan_json=plan_json,
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
    data = plan.to_json()
    meta = data.get("meta")
    data["meta"] = {**(meta if isinstance(meta, dict) else {}), META_KEY: source.to_json()}
    return Observation(
        turn_id=turn_id,
        scope=scope,
        intent_sig=source.intent.signature,
        shape_hash=shape_hash(plan),
        plan_json=json.dumps(data, sort_keys=True, separators=(",", ":"), default=str),
        template_id=template_id,
        ts=now,
    )


def source_of(observation: Observation) -> tuple[str, Source] | None:
    """The template (JSON, without the source) and the source of an observation."""
    try:
        data = json.loads(observation.plan_json)
    except ValueError:
        return None
    meta = data.get("meta") if isinstance(data, dict) else None
    raw = meta.pop(META_KEY, None) if isinstance(meta, dict) else None
    if not isinstance(raw, Mapping):
        return None
    return json.dumps(data, sort_keys=True, separators=(",", ":")), Source.from_json(raw)


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
