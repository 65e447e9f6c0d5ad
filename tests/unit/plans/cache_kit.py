"""Shared fixtures for the cache-layer tests (admission, cache, maintenance): a small catalog,
plans, and entries compiled the way the cache records them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from keel.plans.admission import Candidate
from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.plans.compiler import Compiled, compile_plan
from keel.plans.entries import Source, candidate_of, l0_row, l1_row
from keel.plans.intent import Intent
from keel.plans.intents import IntentExtractor
from keel.plans.normalise import l0_key
from keel.plans.plan import Plan, parse_plan, shape_hash
from keel.plans.signatures import LOGIC_SIG, pool_sig, tools_sig
from keel.plans.store_port import TemplateRow
from keel.tools.contract import ToolContract

SCOPE = "agent/skill"


def tool(
    name: str,
    effect: str = "read_only",
    *,
    code: str = "",
    bindings: Mapping[str, str] | None = None,
    verbs: tuple[str, ...] = (),
    **props: str,
) -> PlanTool:
    """A tool with required properties of the given JSON types."""
    parameters = {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
        "required": list(props),
        "additionalProperties": False,
    }
    contract = ToolContract(
        effect=effect,  # type: ignore[arg-type]
        bindings=dict(bindings or {}),  # type: ignore[arg-type]
        verbs=verbs,
        declared=True,
    )
    return plan_tool(name, parameters, contract, code=code)


BASE_TOOLS: tuple[PlanTool, ...] = (
    tool("list_files", folder="string"),
    tool("delete_file", "delete", path="string"),
    tool("find_orders", customer="string"),
    tool("cancel_order", "write", bindings={"order_id": "piped"}, order_id="string"),
    tool("count_items", bindings={"limit": "structural"}, limit="integer"),
)


def catalog(*extra: PlanTool, drop: tuple[str, ...] = ()) -> Catalog:
    """The base catalog, with tools replaced or added by `extra` and some dropped."""
    tools = {t.name: t for t in BASE_TOOLS if t.name not in drop}
    tools.update({t.name: t for t in extra})
    return catalog_of(tools.values())


def plan(*steps: tuple[str, Mapping[str, Any]]) -> Plan:
    """A parsed plan (final_answer appended)."""
    parsed, errors = parse_plan({"steps": [{"tool": t, "args": dict(a)} for t, a in steps]})
    assert parsed is not None and not errors, errors
    return parsed


def intent_of(request: str, cat: Catalog) -> Intent:
    return IntentExtractor.for_catalog(cat).extract(request)


def compiled(request: str, executed: Plan, cat: Catalog) -> Compiled:
    result = compile_plan(executed, request=request, catalog=cat, intent=intent_of(request, cat))
    assert isinstance(result, Compiled), result
    return result


def source(request: str, result: Compiled, cat: Catalog, **kw: Any) -> Source:
    intent = intent_of(request, cat)
    return Source(
        request=request,
        intent=intent,
        slot_sig=result.slot_sig,
        bindings=result.bindings,
        tools_sig=tools_sig(result.template, cat),
        pool_sig=pool_sig(intent, cat),
        logic_sig=LOGIC_SIG,
        effectful=result.effectful,
        exact_only=result.exact_only,
        **kw,
    )


def entry(
    request: str, executed: Plan, cat: Catalog, *, layer: str = "l1", **row: Any
) -> tuple[Candidate, TemplateRow]:
    """An entry compiled from `executed` run for `request`, as the cache stores it."""
    result = compiled(request, executed, cat)
    src = source(request, result, cat)
    if layer == "l0":
        key = l0_key(request, lang="en", scope=SCOPE)
        stored = l0_row(key=key, scope=SCOPE, plan=result.template, source=src, now=0.0)
    else:
        stored = l1_row(
            scope=SCOPE,
            plan_json=result.template.dumps(),
            shape=shape_hash(result.template),
            source=src,
            now=0.0,
        )
    stored = replace(stored, **row)
    candidate = candidate_of(stored)
    assert candidate is not None
    return candidate, stored
