"""The L2 validator: every check, each with a plan that passes and one that fails."""

from __future__ import annotations

from executor_kit import make_plan, tool

from keel.plans.catalog import catalog_of
from keel.plans.plan import FINAL_ANSWER, Filler, Plan, Slot, Step, parse_plan
from keel.plans.validator import validate

ENTRY_SCHEMA = {
    "type": "object",
    "properties": {
        "entries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "path": {"type": "string"}},
            },
        },
        "total": {"type": "integer"},
    },
}

CATALOG = catalog_of(
    [
        tool(
            "find_orders",
            props={"user": "string", "limit": "integer"},
            required=("user",),
            output_schema=ENTRY_SCHEMA,
        ),
        tool("list_files", props={"folder": "string"}),
        tool(
            "cancel_order",
            effect="write",
            props={"order_id": "string", "reason": {"enum": ["late", "wrong"]}},
            required=("order_id",),
            runtime_resolved=frozenset({"account"}),
        ),
        tool(
            "delete_files",
            effect="delete",
            props={"paths": {"type": "array", "items": {"type": "string"}}},
            bindings={"paths": "piped"},
        ),
        tool("search_web", props={"query": "string"}, extra=True),
    ]
)


def codes(plan: Plan, **kw: object) -> list[str]:
    return [e.code for e in validate(plan, CATALOG, **kw)]  # type: ignore[arg-type]


def test_a_good_plan_has_no_errors() -> None:
    plan = make_plan(
        ("find_orders", {"user": "${SLOT:user}", "limit": 5}),
        ("cancel_order", {"order_id": "${step1.entries.0.id}", "reason": "late"}),
        slots={"user": Slot(type="email")},
        final_message="Cancelled ${step2.@count} of ${step1.total}.",
    )
    assert validate(plan, CATALOG) == ()


def test_unknown_tool_suggests_close_names() -> None:
    [error] = validate(make_plan(("find_order", {"user": "a"})), CATALOG)
    assert error.code == "plan.tool_unknown"
    assert "find_orders" in error.hint() and "step 1" in error.hint()


def test_from_step_must_name_an_earlier_step() -> None:
    ok = make_plan(("list_files", {"folder": "a"}), ("delete_files", {"from_step": "1"}))
    assert codes(ok) == []
    for bad in (2, 0, 5, "one", True):
        plan = make_plan(("list_files", {"folder": "a"}), ("delete_files", {"from_step": bad}))
        assert codes(plan) == ["plan.from_step_invalid"], bad


def test_step_refs_must_target_earlier_tool_steps() -> None:
    later = make_plan(("find_orders", {"user": "${step2.total}"}), ("find_orders", {"user": "x"}))
    assert codes(later) == ["plan.step_ref_invalid"]
    itself = make_plan(("find_orders", {"user": "${step1.total}"}))
    assert codes(itself) == ["plan.step_ref_invalid"]
    final = Plan(
        steps=(
            Step(id=1, tool=FINAL_ANSWER),
            Step(id=2, tool="find_orders", args={"user": "${step1}"}),
            Step(id=3, tool=FINAL_ANSWER),
        )
    )
    assert "plan.step_ref_invalid" in codes(final)


def test_required_arguments_placeholders_and_piping_count_as_present() -> None:
    assert codes(make_plan(("find_orders", {"limit": 3}))) == ["plan.required_missing"]
    placeholder = make_plan(("find_orders", {"user": "${SLOT:u}"}), slots={"u": Slot(type="email")})
    assert codes(placeholder) == []
    piped = make_plan(("list_files", {"folder": "a"}), ("delete_files", {"from_step": 1}))
    assert codes(piped) == []
    unpiped = make_plan(("delete_files", {}))
    assert codes(unpiped) == ["plan.required_missing"]
    empty = make_plan(("delete_files", {"paths": []}))
    assert codes(empty) == ["plan.required_missing"]


def test_literal_types_are_checked_and_placeholders_skip_the_check() -> None:
    bad = make_plan(("find_orders", {"user": "a", "limit": "five"}))
    [error] = validate(bad, CATALOG)
    assert error.code == "plan.type_mismatch" and error.argument == "limit"
    assert "integer" in error.message
    typed_ref = make_plan(
        ("find_orders", {"user": "a", "limit": "${SLOT:n}"}), slots={"n": Slot(type="number")}
    )
    assert codes(typed_ref) == []
    nested = make_plan(("delete_files", {"paths": ["a", 3]}))
    assert codes(nested) == ["plan.type_mismatch"]


def test_enum_membership() -> None:
    plan = make_plan(("cancel_order", {"order_id": "W1", "reason": "bored"}))
    [error] = validate(plan, CATALOG)
    assert error.code == "plan.enum_invalid"
    assert '"late"' in error.message and '"wrong"' in error.message


def test_unknown_arguments_but_not_hidden_piping_or_open_schemas() -> None:
    plan = make_plan(("list_files", {"folder": "a", "recursive": True}))
    [error] = validate(plan, CATALOG)
    assert error.code == "plan.unknown_argument" and error.argument == "recursive"
    assert "folder" in error.message
    hidden = make_plan(("list_files", {"folder": "a", "_actor": "x"}))
    assert codes(hidden) == []
    open_schema = make_plan(("search_web", {"query": "q", "engine": "x"}))
    assert codes(open_schema) == []


def test_runtime_resolved_arguments_only_refused_in_proposed_plans() -> None:
    plan = make_plan(("cancel_order", {"order_id": "W1", "account": "acme"}))
    assert codes(plan, proposed=True) == ["plan.runtime_resolved_set"]
    assert codes(plan) == []


def test_refs_grammar_runtime_keys_fillers_and_slots() -> None:
    plan = make_plan(
        (
            "find_orders",
            {"user": "${RUNTIME:password}", "limit": "${nonsense}"},
        ),
        ("list_files", {"folder": "${FILLER:name} ${SLOT:where} ${RUNTIME:now_plus_2d}"}),
    )
    assert sorted(codes(plan)) == [
        "plan.bad_ref",
        "plan.filler_undefined",
        "plan.runtime_key_unknown",
        "plan.slot_undefined",
    ]
    declared = make_plan(
        ("list_files", {"folder": "${FILLER:name}/${SLOT:where}"}),
        fillers={"name": Filler(prompt="a folder name")},
        slots={"where": Slot(type="path")},
    )
    assert codes(declared) == []


def test_final_message_refs_are_checked() -> None:
    plan = make_plan(
        ("list_files", {"folder": "a"}), final_message="${step1.@count} ${step2.x} ${SLOT:gone}"
    )
    assert sorted(codes(plan)) == ["plan.slot_undefined", "plan.step_ref_invalid"]


def test_final_answer_must_be_last_and_unique() -> None:
    plan = Plan(
        steps=(
            Step(id=1, tool="list_files", args={"folder": "a"}),
            Step(id=2, tool=FINAL_ANSWER),
            Step(id=3, tool="list_files", args={"folder": "b"}),
            Step(id=4, tool=FINAL_ANSWER),
        )
    )
    [error] = validate(plan, CATALOG)
    assert error.code == "plan.final_answer_misplaced" and error.step == 2


def test_step_cap() -> None:
    plan = make_plan(*[("list_files", {"folder": str(i)}) for i in range(4)])
    assert codes(plan, step_cap=3) == ["plan.step_cap"]
    assert codes(plan, step_cap=4) == []


def test_output_paths_are_checked_against_the_producer_schema() -> None:
    good = [
        "${step1.entries.0.id}",
        "${step1.entries.*.path}",
        "${step1.total}",
        "${step1.entries.@count}",
        "${step1.@brief}",
    ]
    for ref in good:
        plan = make_plan(("find_orders", {"user": "a"}), ("list_files", {"folder": ref}))
        assert codes(plan) == [], ref
    plan = make_plan(
        ("find_orders", {"user": "a"}), ("list_files", {"folder": "${step1.entries.0.url}"})
    )
    [error] = validate(plan, CATALOG)
    assert error.code == "plan.output_path_unknown"
    assert "'url'" in error.message and "id, path" in error.message
    no_schema = make_plan(
        ("list_files", {"folder": "a"}), ("list_files", {"folder": "${step1.whatever.x}"})
    )
    assert codes(no_schema) == []


def test_when_must_name_an_earlier_step() -> None:
    plan = make_plan(
        Step(id=1, tool="list_files", args={"folder": "a"}),
        Step(id=2, tool="list_files", args={"folder": "b"}, when_nonempty=2),
    )
    assert codes(plan) == ["plan.when_invalid"]
    ok = make_plan(
        Step(id=1, tool="list_files", args={"folder": "a"}),
        Step(id=2, tool="list_files", args={"folder": "b"}, when_nonempty=1),
    )
    assert codes(ok) == []


def test_metnos_style_plans_validate_after_parsing() -> None:
    plan, errors = parse_plan(
        {
            "steps": [
                {"tool": "find_orders", "args": {"user": "ann"}},
                {
                    "tool": "cancel_order",
                    "args": {"order_id": "${steps.0.entries.0.id}"},
                    "if_prev_entries_nonempty": True,
                },
                {"tool": "final_answer", "args": {}},
            ],
            "final_message": "done {{step2.status}}",
        }
    )
    assert plan is not None and errors == ()
    assert validate(plan, CATALOG) == ()


def test_errors_read_as_repair_hints() -> None:
    plan = make_plan(("find_orders", {"user": "a", "limit": "x"}))
    [error] = validate(plan, CATALOG)
    assert error.hint().startswith("step 1, argument 'limit': ")
    assert error.hint().endswith("[plan.type_mismatch]")
