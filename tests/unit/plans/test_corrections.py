"""Corrections, negation per clause and ids on a cache hit (plan-cache spec §3.6, §3.9).

Tables of (recorded request, new request) -> admitted (with the bound values) or rejected
with a reason, through `keel.plans.admission.admit`, for the retail store's cancel tool: a
pending order cancelled with one of two reasons, `no longer needed` / `ordered by mistake`.
"""

from __future__ import annotations

import pytest
from cache_kit import catalog, entry, intent_of, plan

from keel.plans.admission import REASONS, Admitted, Rejected, admit
from keel.plans.bind_checks import id_entities, polarity_problem
from keel.plans.catalog import Catalog, PlanTool, plan_tool
from keel.plans.clauses import correction
from keel.plans.entities import find_entities
from keel.plans.lookalikes import plain
from keel.tools.contract import ToolContract

REASONS_ENUM = ["no longer needed", "ordered by mistake"]


def cancel_tool(*, structural: bool) -> PlanTool:
    parameters = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "reason": {"type": "string", "enum": REASONS_ENUM},
        },
        "required": ["order_id", "reason"],
        "additionalProperties": False,
    }
    contract = ToolContract(
        effect="write",
        bindings={"reason": "structural"} if structural else {},
        declared=True,
    )
    return plan_tool("cancel_pending_order", parameters, contract)


def details_tool() -> PlanTool:
    parameters = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
        "additionalProperties": False,
    }
    return plan_tool(
        "get_order_details", parameters, ToolContract(effect="read_only", declared=True)
    )


SAID = catalog(cancel_tool(structural=False), details_tool())
"""The reason is a request value: it becomes an enum slot."""
CHOSEN = catalog(cancel_tool(structural=True), details_tool())
"""The reason is structural (as examples/retail ships it): kept as the model wrote it."""

RECORDED = "cancel order #W7044833, no longer needed"
CANCEL = plan(("cancel_pending_order", {"order_id": "#W7044833", "reason": "no longer needed"}))


def verdict(
    request: str,
    *,
    recorded: str = RECORDED,
    executed: object = CANCEL,
    cat: Catalog = SAID,
    layer: str = "l1",
) -> Admitted | Rejected:
    candidate, _ = entry(recorded, executed, cat, layer=layer)  # type: ignore[arg-type]
    return admit(
        candidate,
        request=request,
        intent=intent_of(request, cat),
        catalog=cat,
        exact=layer == "l0",
    )


def outcome(result: Admitted | Rejected) -> str | dict[str, object]:
    return dict(result.slots) if isinstance(result, Admitted) else result.reason


NEW_ID = {"order_id": "#W9474165", "reason": "no longer needed"}


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        # the same request for another order is served
        ("cancel order #W9474165, no longer needed", NEW_ID),
        ("Cancel order #W9474165 -- no longer needed!", NEW_ID),
        ("cancel order #W9474165, ordered by mistake", {**NEW_ID, "reason": "ordered by mistake"}),
        # a later clause corrects, negates or replaces an earlier one
        ("cancel order #W9474165, no longer needed -- no, sorry, I ordered it by mistake", "correction"),  # noqa: E501
        ("cancel order #W7044833, no longer needed - not this one, order #W9474165", "correction"),
        ("cancel order #W7044833, no longer needed. no, wait, don't", "correction"),
        ("cancel order #W7044833, no longer needed. Actually, don't.", "correction"),
        ("cancel order #W7044833, no longer needed - just kidding, keep it", "correction"),
        ("cancel order #W7044833, no longer needed, sorry, I meant #W9474165", "correction"),
        ("cancel order #W7044833, no longer needed. scratch that", "correction"),
        ("cancel order #W9474165 instead, no longer needed", "correction"),
        ("cancel order #W7044833, no longer needed... never mind", "correction"),
        ("cancel order #W7044833, no longer needed, on second thought keep it", "correction"),
        ("cancel order #W7044833, no longer needed. No.", "correction"),
        ("cancel order #W7044833, no longer needed, please don't", "correction"),
        ("cancel order #W7044833 no longer needed and then don't cancel it", "correction"),
        ("cancel order #W7044833, no longer needed, anzi no", "correction"),
        ("cancel order #W7044833, no longer needed, invece l'ordine #W9474165", "correction"),
        ("cancel order #W7044833, no longer needed, lascia perdere", "correction"),
        # the verb negated
        ("don't cancel order #W9474165, no longer needed", "polarity"),
        ("I do not want to cancel order #W9474165, no longer needed", "polarity"),
        # ids: a second id, spelt as ids are, with lookalike characters, is seen
        ("cancel order #W9474165 and order #W7044833, no longer needed", "binder_coverage"),
        ("cancel order #W9474165 and #\u051c7044833, no longer needed", "binder_coverage"),
        ("cancel order #W9474165, no longer needed, and W7044833", "binder_coverage"),
        ("cancel order #W9474165, no longer needed, mail me at ann@x.org", "binder_coverage"),
        ("cancel order #W9474165, no longer needed, call +39 055 123 4567", "binder_coverage"),
        # lookalike characters are read plain: the id is the Latin one
        ("cancel order #\u051c9474165, no longer needed", NEW_ID),
        ("cancel order \uff03\uff37\uff19\uff14\uff17\uff14\uff11\uff16\uff15, no longer needed", NEW_ID),  # noqa: E501
        ("cancel order #W94741\u200b65, no longer needed", NEW_ID),
    ],
)  # fmt: skip
def test_a_cancel_entry_against_new_requests(
    request_text: str, expected: str | dict[str, object]
) -> None:
    assert outcome(verdict(request_text)) == expected


LOOKUP_REQ = "where is order #W7044833"
LOOKUP = plan(("get_order_details", {"order_id": "#W7044833"}))


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        # a negation that belongs to a value negates nothing of the request: polarity
        # passes, and the statement, a clause the recorded request did not say, is extra
        ("where is order #W9474165, nothing arrived", "extra_clause"),
        ("where is order #W9474165, it's not working", "extra_clause"),
        ("where is order #W9474165, I never received it", "extra_clause"),
        ("where is order #W9474165, it hasn't arrived", "extra_clause"),
        ("dov'è l'ordine #W9474165, non è arrivato", "verb_coverage"),
        # a negation of the request's own verb or of a value still counts
        ("don't look up order #W9474165", "polarity"),
        ("where is order #W9474165, not the one from #W7044833", "binder_coverage"),
    ],
)
def test_lexical_negations_inside_a_value_do_not_negate_the_request(
    request_text: str, expected: str | dict[str, object]
) -> None:
    result = verdict(request_text, recorded=LOOKUP_REQ, executed=LOOKUP)
    got = outcome(result)
    if expected == "verb_coverage":  # another language's words: any miss will do
        assert isinstance(result, Rejected)
    else:
        assert got == expected


@pytest.mark.parametrize(
    "said",
    ["nothing arrived", "it's not working", "I never received it", "it hasn't arrived"],
)
def test_a_negation_inside_a_value_said_in_both_requests_is_served(said: str) -> None:
    result = verdict(
        f"where is order #W9474165, {said}", recorded=f"{LOOKUP_REQ}, {said}", executed=LOOKUP
    )
    assert outcome(result) == {"order_id": "#W9474165"}


CHOSEN_REQ = "cancel order #W7044833, I no longer need it"


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("cancel order #W9474165, I no longer need it", {"order_id": "#W9474165"}),
        # the structural reason was the model's reading of these words: others may choose
        # the other reason, and "no longer" no longer stops them as a negation
        # (said as a clause of its own, the other reason is an extra clause first)
        ("cancel order #W9474165, I ordered it by mistake", "extra_clause"),
        ("cancel order #W9474165", "literal_choice"),
        ("please cancel order #W9474165 as I don't need it anymore", "literal_choice"),
        ("cancel order #W9474165, I no longer need it -- no, sorry, I ordered it by mistake", "correction"),  # noqa: E501
        ("don't cancel order #W9474165, I no longer need it", "polarity"),
    ],
)  # fmt: skip
def test_a_structural_reason_serves_only_the_recorded_words(
    request_text: str, expected: str | dict[str, object]
) -> None:
    assert outcome(verdict(request_text, recorded=CHOSEN_REQ, cat=CHOSEN)) == expected


@pytest.mark.parametrize(
    ("recorded", "request_text", "expected"),
    [
        # the exact request is served again
        (RECORDED, "Cancel order #W7044833 -- no longer needed.", {
            "order_id": "#W7044833", "reason": "no longer needed"}),
        # a recorded correction, an id no slot takes, a phone number no slot takes
        ("cancel order #W7044833, no longer needed. no, wait, don't",
         "cancel order #W7044833, no longer needed. no, wait, don't", "correction"),
        ("cancel order #W7044833 and order #W9474165, no longer needed",
         "cancel order #W7044833 and order #W9474165, no longer needed", "binder_ids"),
        ("cancel order #W7044833, no longer needed, call 555-123-4567",
         "cancel order #W7044833, no longer needed, call 555-123-4567", "binder_ids"),
    ],
)  # fmt: skip
def test_an_exact_hit_checks_corrections_and_ids_too(
    recorded: str, request_text: str, expected: str | dict[str, object]
) -> None:
    assert outcome(verdict(request_text, recorded=recorded, layer="l0")) == expected


def test_a_free_text_slot_never_swallows_two_ids() -> None:
    recorded = "cancel the order called spare part, no longer needed"
    executed = plan(
        ("cancel_pending_order", {"order_id": "spare part", "reason": "no longer needed"})
    )
    got = verdict("cancel the order called #W1234567 and order #W7654321, no longer needed",
                  recorded=recorded, executed=executed)  # fmt: skip
    assert isinstance(got, Rejected) and got.reason in ("binder_coverage", "binder_ids"), got


def test_the_new_reasons_are_in_check_order() -> None:
    order = [REASONS.index(r) for r in ("status", "correction", "binder_missing_slot")]
    assert order == sorted(order)
    order = [REASONS.index(r) for r in ("binder_coverage", "binder_ids", "polarity")]
    assert order == sorted(order)
    assert REASONS.index("literal_choice") < REASONS.index("licence")


# --- the pieces ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("cancel #W7044833 and order #W9474165", ["#W7044833", "#W9474165"]),
        ("cancel W7044833", ["W7044833"]),
        ("where is order 12 and ticket no. 5?", ["12", "5"]),
        ("delete 3 files", []),
        ("mail ann@x.org or call (555) 123-4567", ["ann@x.org", "(555) 123-4567"]),
        ("tracking 123456789", ["123456789"]),
    ],
)
def test_id_like_entities(text: str, ids: list[str]) -> None:
    assert [e.text for e in id_entities(text)] == ids


def test_hash_letter_ids_and_phones_are_typed_entities() -> None:
    kinds = [(e.kind, e.value) for e in find_entities("#W1234567 +1 555 123 4567")]
    assert kinds == [("id", "#W1234567"), ("phone", "+15551234567")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#\u051c1234567", "#W1234567"),  # Cyrillic WE
        ("\uff03\uff37\uff11\uff12", "#W12"),  # fullwidth
        ("#W12\u200b34", "#W1234"),  # zero-width space
        ("b\u043eb@x.org", "bob@x.org"),  # Cyrillic o
        ("\u039f1234", "O1234"),  # Greek Omicron with digits
        ("\u041f\u0440\u0438\u0432\u0435\u0442", "\u041f\u0440\u0438\u0432\u0435\u0442"),  # Russian
    ],
)  # fmt: skip
def test_lookalikes_are_made_plain(text: str, expected: str) -> None:
    assert plain(text) == expected
    assert plain(plain(text)) == plain(text)


@pytest.mark.parametrize(
    ("text", "corrected"),
    [
        ("cancel it, I no longer need it", False),
        ("it is not working, please cancel order 12", False),
        ("nothing arrived, cancel order 12", False),
        ("sorry, can you cancel order 12?", False),
        ("find old logs and don't delete them", False),
        ("cancel order 12 -- no, wait, don't", True),
        ("Actually, don't.", True),
        ("just kidding, keep it", True),
        ("sorry, I meant order 13", True),
        ("cancel 12, scratch that, cancel 13", True),
        ("cancel 12. No.", True),
        ("annulla l'ordine 12, anzi no", True),
        ("annulla l'ordine 12, scherzavo", True),
    ],
)
def test_corrections(text: str, corrected: bool) -> None:
    assert bool(correction(text)) is corrected, correction(text)


@pytest.mark.parametrize(
    ("recorded", "request_text", "differs"),
    [
        ("cancel order 12, I no longer need it", "cancel order 12", False),
        ("cancel order 12", "cancel order 12, it is not working", False),
        ("don't cancel order 12, I no longer need it", "cancel order 12, I no longer need it", True),  # noqa: E501
        ("cancel order 12", "do not cancel order 12", True),
        ("show files not in /tmp", "show files in /tmp", True),
        ("list files except *.pdf", "list files *.pdf", True),
    ],
)  # fmt: skip
def test_polarity_per_clause(recorded: str, request_text: str, differs: bool) -> None:
    assert bool(polarity_problem(request_text, [], recorded, [])) is differs
