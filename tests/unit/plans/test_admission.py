"""Admission checks on a hit: order, reason codes, bound values."""

from __future__ import annotations

from dataclasses import replace

from cache_kit import catalog, entry, intent_of, plan, tool

from keel.plans.admission import (
    REASONS,
    AdmissionPolicy,
    Admitted,
    Rejected,
    admit,
    bound_plan,
    check_plan,
    uncovered_verbs,
    unlicensed_steps,
)
from keel.plans.intent import Clause, Intent
from keel.plans.plan import Slot

CAT = catalog()
LIST = plan(("list_files", {"folder": "/tmp/docs"}))
DELETE = plan(("delete_file", {"path": "/tmp/a.txt"}))
LIST_REQ = "list files in /tmp/docs"
DELETE_REQ = "delete file /tmp/a.txt"


def verdict(
    request: str,
    *,
    recorded: str = LIST_REQ,
    executed: object = LIST,
    cat: object = CAT,
    serve_cat: object = None,
    **kw: object,
) -> Admitted | Rejected:
    candidate, _ = entry(recorded, executed, cat, **kw.pop("row", {}))  # type: ignore[arg-type]
    current = serve_cat if serve_cat is not None else cat
    intent = kw.pop("intent", None) or intent_of(request, current)  # type: ignore[arg-type]
    return admit(candidate, request=request, intent=intent, catalog=current, **kw)  # type: ignore[arg-type]


def reason(result: Admitted | Rejected) -> str:
    return result.reason if isinstance(result, Rejected) else "admitted"


def test_reasons_are_in_check_order() -> None:
    assert REASONS[:4] == ("signature", "context_bound", "anti_entry", "status")
    assert REASONS[-3:] == ("licence", "verb_coverage", "validator")


def test_slot_variant_binds_the_new_value() -> None:
    result = verdict("list files in /tmp/other")
    assert isinstance(result, Admitted)
    assert dict(result.slots) == {"folder": "/tmp/other"}


def test_exact_hit_rebinds_the_recorded_values() -> None:
    result = verdict("List files in /tmp/docs!", exact=True, row={"layer": "l0"})
    assert isinstance(result, Admitted)
    assert dict(result.slots) == {"folder": "/tmp/docs"}


def test_changed_contract_is_a_signature_miss() -> None:
    changed = catalog(tool("list_files", code="v2", folder="string"))
    assert reason(verdict("list files in /tmp/other", serve_cat=changed)) == "signature"


def test_missing_tool_is_a_signature_miss() -> None:
    gone = catalog(drop=("list_files",))
    intent = intent_of(LIST_REQ, CAT)
    assert reason(verdict(LIST_REQ, serve_cat=gone, intent=intent)) == "signature"


def test_new_sibling_tool_is_a_pool_signature_miss() -> None:
    sibling = catalog(tool("list_files_recent", folder="string"))
    result = verdict("list files in /tmp/other", serve_cat=sibling)
    assert isinstance(result, Rejected) and result.detail == "pool"


def test_logic_signature_mismatch() -> None:
    result = verdict("list files in /tmp/other", row={"logic_sig": "old"})
    assert isinstance(result, Rejected) and (result.reason, result.detail) == ("signature", "logic")


def test_context_bound_turn() -> None:
    assert reason(verdict("list files in /tmp/other", context_bound=True)) == "context_bound"


def test_anti_entry_blocks_its_shape_unless_the_policy_ignores_it() -> None:
    candidate, row = entry(LIST_REQ, LIST, CAT)
    intent = intent_of("list files in /tmp/other", CAT)
    args = {"request": "list files in /tmp/other", "intent": intent, "catalog": CAT}
    blocked = frozenset({row.shape_hash})
    assert reason(admit(candidate, blocked=blocked, **args)) == "anti_entry"  # type: ignore[arg-type]
    lax = AdmissionPolicy(anti_entries=False)
    assert reason(admit(candidate, blocked=blocked, policy=lax, **args)) == "admitted"  # type: ignore[arg-type]


def test_status_demoted_and_stale_l1_entries() -> None:
    for status in ("demoted", "stale"):
        assert reason(verdict("list files in /tmp/other", row={"status": status})) == "status"
    assert reason(verdict("list files in /tmp/other", row={"status": "shadow"})) == "admitted"


def test_binder_reasons() -> None:
    assert reason(verdict("list files")) == "binder_missing_slot"
    assert reason(verdict("list files in /tmp/docs and /tmp/x")) == "binder_coverage"
    assert reason(verdict("list files not in /tmp/docs")) == "polarity"


def test_a_template_without_slots_still_meets_coverage_and_polarity() -> None:
    events = catalog(tool("list_events"))
    slotless = plan(("list_events", {}))
    recorded = "show tomorrow's events"

    def check(request: str, **kw: object) -> str:
        return reason(verdict(request, recorded=recorded, executed=slotless, cat=events, **kw))

    assert check("show my events on 2026-03-05") == "binder_coverage"
    assert check("show my events on March 5, 2026") == "binder_coverage"
    assert check("show today's events") == "binder_coverage"
    assert check("don't show tomorrow's events") == "polarity"
    assert check("show tomorrow's events!") == "admitted"
    assert check("show tomorrow's events", exact=True, row={"layer": "l0"}) == "admitted"
    lax = AdmissionPolicy(coverage=False)
    assert check("show my events on 2026-03-05", policy=lax) == "admitted"


def test_coverage_and_polarity_can_be_switched_off() -> None:
    lax = AdmissionPolicy(coverage=False, polarity=False)
    assert reason(verdict("list files not in /tmp/docs", policy=lax)) == "admitted"
    result = verdict("list files in /tmp/docs and /tmp/x", policy=lax)
    assert reason(result) in ("admitted", "binder_ambiguous")


def test_effect_needs_a_licence_from_the_current_intent() -> None:
    negated = Intent(clauses=(Clause(verb="delete", object="file", negated=True),))
    lax = AdmissionPolicy(polarity=False)
    result = verdict(
        "don't delete file /tmp/a.txt",
        recorded=DELETE_REQ,
        executed=DELETE,
        intent=negated,
        policy=lax,
    )
    assert reason(result) == "licence"
    assert unlicensed_steps(DELETE, negated, CAT) == ["step 1 delete_file"]
    assert unlicensed_steps(LIST, negated, CAT) == []


def test_licence_by_declared_contract_verb() -> None:
    cancel = tool("cancel_order", "write", verbs=("revoke",), order_id="string")
    cat = catalog(cancel)
    steps = plan(("cancel_order", {"order_id": "1"}))
    revoke = Intent(clauses=(Clause(verb="revoke", object="order"),))
    assert unlicensed_steps(steps, revoke, cat) == []


def test_verb_coverage_both_ways() -> None:
    two = Intent(
        clauses=(Clause(verb="list", object="files"), Clause(verb="delete", object="file"))
    )
    assert uncovered_verbs(LIST, two, CAT) == ["delete"]
    show = Intent(clauses=(Clause(verb="show", object="files"),))
    assert uncovered_verbs(LIST, show, CAT) == []
    rejected = check_plan(LIST, two, CAT, {"folder": "/tmp"})
    assert rejected is not None and rejected.reason == "verb_coverage"


def test_validator_sees_the_bound_values() -> None:
    intent = intent_of(LIST_REQ, CAT)
    bad = check_plan(plan(("list_files", {"folder": "${SLOT:folder}"})), intent, CAT, {"folder": 5})
    assert bad is not None and bad.reason == "validator"
    counted = plan(("count_items", {"limit": "${SLOT:n}"}))
    counted = replace(counted, slots={"n": Slot(type="number")})
    count = Intent(clauses=(Clause(verb="count", object="items"),))
    assert check_plan(counted, count, CAT, {"n": 3}) is None
    assert check_plan(counted, count, CAT, {"n": "three"}) is not None


def test_first_failing_check_wins() -> None:
    changed = catalog(tool("list_files", code="v2", folder="string"))
    result = verdict("list files", serve_cat=changed, context_bound=True, row={"status": "demoted"})
    assert reason(result) == "signature"
    result = verdict("list files", context_bound=True, row={"status": "demoted"})
    assert reason(result) == "context_bound"


def test_bound_plan_keeps_types_and_renders_embedded_refs() -> None:
    template = plan(("list_files", {"folder": "${SLOT:root}/${SLOT:sub}", "n": "${SLOT:n}"}))
    filled = bound_plan(template, {"root": "/tmp", "sub": "a", "n": 3})
    assert filled.steps[0].plain_args() == {"folder": "/tmp/a", "n": 3}
    assert bound_plan(template, {}) is template
