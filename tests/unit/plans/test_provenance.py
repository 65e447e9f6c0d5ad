"""Provenance of a recorded plan's literals (`keel.plans.provenance`, the compiler's use of it):
a span of the request, a memory value (re-resolved on serve), a value of the conversation
(not cacheable) or a constant; and what of the conversation a final message may not keep."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from keel.plans.cache import unset_memory
from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.plans.compiler import Compiled, Uncacheable, compile_plan
from keel.plans.intents import IntentExtractor
from keel.plans.plan import Plan, Step, parse_plan
from keel.plans.provenance import RecordContext, name_like, sentence_starts
from keel.plans.refs import MemoryRef, find_refs, parse_ref, render_ref
from keel.plans.resolve import ResolveEnv, resolve_args
from keel.tools.contract import ToolContract


def _tool(name: str, effect: str, params: Mapping[str, object], **kw: object) -> PlanTool:
    contract = ToolContract(effect=effect, **kw)  # type: ignore[arg-type]
    return plan_tool(name, {"type": "object", "properties": params}, contract)


CATALOG: Catalog = catalog_of(
    [
        _tool("get_order_details", "read_only", {"order_id": {"type": "string"}}),
        _tool("list_products", "read_only", {"kind": {"enum": ["all", "new"]}}),
        _tool(
            "get_user_details",
            "read_only",
            {"user_id": {"type": "string"}},
            bindings={"user_id": "runtime"},
        ),
        _tool(
            "cancel_pending_order",
            "write",
            {"order_id": {"type": "string"}, "reason": {"enum": ["no longer needed"]}},
            bindings={"reason": "structural"},
        ),
    ]
)
EXTRACT = IntentExtractor.for_catalog(CATALOG)
ANN = RecordContext(
    memory={"project.user_id": "u-ann", "project.user_name": "Ann Lee", "project.order": "#W1"},
    earlier=("my other order is #W3", "Noted.", '{"order_id": "#W5", "city": "Springfield"}'),
    outputs={1: '{"order_id": "#W7", "address": "1 Elm Street"}'},
)


def plan(*steps: tuple[str, dict[str, object]], final: str = "") -> Plan:
    body = {"steps": [{"tool": t, "args": a} for t, a in steps], "final_message": final}
    parsed, errors = parse_plan(body)
    assert parsed is not None, errors
    return parsed


def compile_(executed: Plan, request: str, context: RecordContext = ANN) -> Compiled | Uncacheable:
    return compile_plan(
        executed,
        request=request,
        catalog=CATALOG,
        intent=EXTRACT.extract(request),
        context=context,
    )


def compiled(executed: Plan, request: str, context: RecordContext = ANN) -> Compiled:
    result = compile_(executed, request, context)
    assert isinstance(result, Compiled), result
    return result


# --- arguments -------------------------------------------------------------------------------


def test_a_request_span_is_a_slot_even_when_memory_holds_it_too() -> None:
    result = compiled(plan(("get_order_details", {"order_id": "#W1"})), "where is order #W1?")
    assert result.template.steps[0].plain_args()["order_id"].startswith("${SLOT:")


def test_a_memory_value_becomes_a_memory_ref() -> None:
    result = compiled(plan(("get_order_details", {"order_id": "#W1"})), "how is my open order?")
    assert result.template.steps[0].plain_args() == {"order_id": "${MEMORY:project.order}"}
    assert not result.exact_only  # re-resolved, not a baked value


def test_a_runtime_bound_literal_from_memory_becomes_a_memory_ref() -> None:
    result = compiled(plan(("get_user_details", {"user_id": "u-ann"})), "show my details")
    assert result.template.steps[0].plain_args() == {"user_id": "${MEMORY:project.user_id}"}


def test_a_runtime_bound_literal_not_in_memory_is_still_refused() -> None:
    result = compile_(plan(("get_user_details", {"user_id": "u-bob"})), "show my details")
    assert isinstance(result, Uncacheable) and result.reason == "runtime_literal"


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ("#W3", "an earlier user message"),
        ("#W5", "an earlier tool output"),
        ("Springfield", "an earlier tool output (a word of it)"),
        ("Ann", "a word of a memory value it does not equal"),
    ],
)
def test_a_value_of_the_conversation_is_not_cacheable(value: str, where: str) -> None:
    result = compile_(plan(("get_order_details", {"order_id": value})), "where is my order?")
    assert isinstance(result, Uncacheable), where
    assert result.reason == "context_value"


def test_an_earlier_steps_output_of_this_turn_is_context_a_later_ones_is_not() -> None:
    executed = plan(("list_products", {}), ("get_order_details", {"order_id": "#W7"}))
    result = compile_(executed, "where is my order?")
    assert isinstance(result, Uncacheable) and result.reason == "context_value"
    # the step's own output (step 1 here) echoing its argument does not count
    alone = compile_(plan(("get_order_details", {"order_id": "#W7"})), "where is my order?")
    assert isinstance(alone, Compiled) and alone.exact_only


def test_an_effectful_step_with_a_context_value_is_not_cacheable() -> None:
    executed = plan(("cancel_pending_order", {"order_id": "#W3", "reason": "no longer needed"}))
    result = compile_(executed, "cancel my order, I no longer need it")
    assert isinstance(result, Uncacheable) and result.reason == "context_value"


def test_an_effectful_step_with_a_memory_value_gets_a_memory_ref() -> None:
    executed = plan(("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"}))
    result = compiled(executed, "cancel my open order, I no longer need it")
    assert result.template.steps[0].plain_args() == {
        "order_id": "${MEMORY:project.order}",
        "reason": "no longer needed",
    }


def test_an_enum_value_and_a_value_found_nowhere_are_constants() -> None:
    context = RecordContext(earlier=("show me all the things",))
    result = compiled(plan(("list_products", {"kind": "all"})), "what do you sell?", context)
    assert result.exact_only  # a constant the request does not say: exact reuse only
    assert result.template.steps[0].plain_args() == {"kind": "all"}
    nowhere = compiled(plan(("get_order_details", {"order_id": "#W9"})), "where is it?")
    assert nowhere.exact_only


def test_a_value_equal_to_two_memory_entries_is_not_a_ref() -> None:
    context = RecordContext(memory={"project.a": "#W1", "project.b": "#W1"})
    result = compile_(plan(("get_order_details", {"order_id": "#W1"})), "where?", context)
    assert isinstance(result, Uncacheable) and result.reason == "context_value"


def test_without_a_context_nothing_changes() -> None:
    result = compile_(plan(("get_order_details", {"order_id": "#W3"})), "where?", RecordContext())
    assert isinstance(result, Compiled) and result.exact_only


# --- the final message -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "final",
    [
        "Sure, Ann! We carry ${step1.products}.",  # a word of a memory value
        "Hello Ann Lee.",  # a memory value
        "Your order ships to Springfield.",  # a word of an earlier tool output
        "Order #W3 is on its way.",  # an id of an earlier turn
        "Your user id is u-ann.",  # a memory value
    ],
)
def test_a_final_message_holding_the_conversation_is_dropped(final: str) -> None:
    result = compiled(plan(("list_products", {}), final=final), "what do you sell?")
    assert result.template.final_message == ""


def test_a_final_message_of_refs_and_plain_words_is_kept() -> None:
    final = "Sure! We carry ${step1.products}. Order ${step1.order_id} ships soon."
    context = RecordContext(memory=ANN.memory, outputs=ANN.outputs, replies=("Noted.",))
    result = compiled(plan(("list_products", {}), final=final), "what do you sell?", context)
    assert result.template.final_message == final
    # a word the user said before starting a sentence may be a name: the message goes
    # ("my other order is #W3" said "order")
    again = compiled(plan(("list_products", {}), final=final), "what do you sell?")
    assert again.template.final_message == ""


def test_a_name_the_user_said_in_the_request_is_not_kept_either() -> None:
    result = compiled(
        plan(("list_products", {}), final="Hi, Yusuf! We carry ${step1.products}."),
        "hi, I'm Yusuf: what do you sell?",
        RecordContext(),
    )
    assert result.template.final_message == ""


@pytest.mark.parametrize(
    ("final", "context", "why"),
    [
        ("Ann, you have ${step1.count} orders.", ANN, "a memory name starting the reply"),
        ("Lee! We carry ${step1.products}.", ANN, "a surname from memory at a sentence start"),
        ("We carry ${step1.products}. Ann, anything else?", ANN, "a name starting a sentence"),
        ("Thanks ann, we carry ${step1.products}.", ANN, "a memory word in lower case"),
        ("We carry ${step1.products}, lena.", RecordContext(memory={"user.name": "Lena Park"}),
         "a memory word inside a sentence"),
        ("Zora, we carry ${step1.products}.", RecordContext(earlier=("hi, Zora here",)),
         "a name of an earlier user message at a sentence start"),
        ("Springfield has ${step1.count} shops.", ANN, "a word of an earlier tool output"),
        ("Yusuf, we carry ${step1.count}.",
         RecordContext(outputs={1: '{"name": "Yusuf Rossi", "count": 3}'}),
         "a capitalised word of this turn's output"),
        ("Mei: ${step1.count} orders.",
         RecordContext(memory={"user.profile": {"name": "Mei Tanaka", "tier": 2}}),
         "a string inside a structured memory value"),
    ],
)  # fmt: skip
def test_a_name_starting_a_sentence_is_not_kept(
    final: str, context: RecordContext, why: str
) -> None:
    result = compiled(plan(("list_products", {}), final=final), "what do you sell?", context)
    assert result.template.final_message == "", why


@pytest.mark.parametrize(
    ("final", "context"),
    [
        # a sentence start that only the bot's own earlier replies hold is its wording
        ("Sure! We carry ${step1.products}.", RecordContext(replies=("Sure, I can help.",))),
        ("Your order ships soon.", ANN),  # a function word
        ("Great, we carry ${step1.products}.", ANN),
        # this turn's output says "done" as a status, not as a name
        ("Done: we carry ${step1.count}.", RecordContext(outputs={1: '{"status": "done"}'})),
        # a memory word of one letter, or a function word of a memory value
        ("Yes, we carry ${step1.products}.", RecordContext(memory={"user.note": "yes I am J"})),
    ],
)
def test_a_sentence_start_of_the_bots_own_wording_is_kept(
    final: str, context: RecordContext
) -> None:
    result = compiled(plan(("list_products", {}), final=final), "what do you sell?", context)
    assert result.template.final_message == final


def test_memory_words_and_source_words() -> None:
    context = RecordContext(
        memory={"user.customer": "yusuf@shop.io", "user.name": "Yusuf Rossi", "user.n": 7},
        hidden=("Ortiz",),
        earlier=('{"name": "Mei Tanaka", "order_id": "W1"}', "I'm Zora"),
        replies=("Sure, Bruno!",),
        outputs={1: '{"status": "done", "owner": "Tom Reed"}'},
    )
    assert context.memory_words() == {"yusuf", "shop", "rossi"}
    sources = context.source_words()
    assert {"yusuf", "rossi", "ortiz", "mei", "tanaka", "zora"} <= sources
    assert {"tom", "reed"} <= sources  # capitalised in this turn's output
    assert not {"name", "order", "id", "sure", "bruno", "done"} & sources
    assert sentence_starts("Lena, you have 3. Ok then, Lena! And Mei.") == ["Lena", "Ok", "And"]


def test_name_like_words_skip_sentence_starts() -> None:
    assert name_like("Sure, Ann! We carry Mugs. Order from Springfield.") == [
        "Ann",
        "Mugs",
        "Springfield",
    ]


# --- serving -------------------------------------------------------------------------------


def test_the_memory_ref_grammar() -> None:
    assert parse_ref("MEMORY:project.user_id") == MemoryRef(key="project.user_id")
    assert render_ref(MemoryRef(key="project.user_id")) == "${MEMORY:project.user_id}"
    assert find_refs("${MEMORY:user_id}")[0].ref.__class__.__name__ == "BadRef"


def test_a_memory_ref_resolves_in_the_current_conversation_with_its_own_tag() -> None:
    tool = CATALOG["get_order_details"]
    step = Step(id=1, tool=tool.name, args={"order_id": "${MEMORY:project.order}"})
    env = ResolveEnv(
        outputs={}, runtime={"memory:project.order": "#W2"}, fillers={}, slots={}, served=True
    )
    resolved = resolve_args(step, tool.contract, env, parameters=tool.parameters)
    assert resolved == ({"order_id": "#W2"}, {"order_id": "memory"})
    empty = ResolveEnv(outputs={}, runtime={}, fillers={}, slots={}, served=True)
    missing = resolve_args(step, tool.contract, empty)  # no schema: every argument required
    assert not isinstance(missing, tuple) and missing.code == "plan.unresolved"


def test_unset_memory_refuses_the_hit() -> None:
    template = compiled(plan(("get_order_details", {"order_id": "#W1"})), "my open order?")
    assert unset_memory(template.template, {"project.order": "#W2"}) == []
    assert unset_memory(template.template, {}) == ["project.order"]
    assert unset_memory(template.template, {"project.order": ""}) == ["project.order"]
