"""The template compiler (plan-cache spec §3.6 compile rules, design note B1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.plans.compiler import CONTEXT_BOUND, Compiled, Uncacheable, compile_plan
from keel.plans.intent import Intent
from keel.plans.intents import IntentExtractor
from keel.plans.plan import Plan, Slot, parse_plan
from keel.plans.slots import BindMiss, Bound, bind
from keel.tools.contract import ToolContract

READ = "read_only"


def _catalog() -> Catalog:
    def tool(
        name: str, effect: str, params: Mapping[str, object] | None = None, **kw: object
    ) -> PlanTool:
        contract = ToolContract(effect=effect, **kw)  # type: ignore[arg-type]
        return plan_tool(name, {"type": "object", "properties": params or {}}, contract)

    return catalog_of(
        [
            tool("find_files", READ, bindings={"limit": "structural", "sort": "structural"}),
            tool("delete_files", "delete", bindings={"paths": "piped"}),
            tool("delete_task", "delete"),
            tool("list_tasks", READ),
            tool("find_messages", READ, {"folder": {"enum": ["inbox", "archive", "spam"]}}),
            tool(
                "send_message",
                "send",
                bindings={"sender": "runtime"},
                runtime_resolved=frozenset({"account"}),
            ),
            tool("get_approval", READ),
            tool("undo_last_change", "write"),
            tool("call_contact", "send"),
        ]
    )


CATALOG = _catalog()
EXTRACT = IntentExtractor.for_catalog(CATALOG)


def plan(
    *steps: tuple[str, dict[str, object]],
    final: str = "",
    slots: dict[str, object] | None = None,
    fillers: dict[str, object] | None = None,
    meta: dict[str, object] | None = None,
) -> Plan:
    body: dict[str, object] = {
        "steps": [{"tool": t, "args": a} for t, a in steps],
        "final_message": final,
        "slots": slots or {},
        "fillers": fillers or {},
        "meta": meta or {},
    }
    parsed, errors = parse_plan(body)
    assert parsed is not None, errors
    return parsed


def compile_for(
    executed: Plan,
    request: str,
    *,
    context_bound: frozenset[str] = CONTEXT_BOUND,
    request_dates: bool = False,
    gazetteers: Mapping[str, list[str]] | None = None,
) -> Compiled | Uncacheable:
    return compile_plan(
        executed,
        request=request,
        catalog=CATALOG,
        intent=EXTRACT.extract(request),
        context_bound=context_bound,
        request_dates=request_dates,
        gazetteers=gazetteers,
    )


def compiled(executed: Plan, request: str, **kw: Any) -> Compiled:
    result = compile_for(executed, request, **kw)
    assert isinstance(result, Compiled), result
    return result


def refused(executed: Plan, request: str, **kw: Any) -> str:
    result = compile_for(executed, request, **kw)
    assert isinstance(result, Uncacheable), result
    return result.reason


def args(result: Compiled, index: int = 0) -> dict[str, object]:
    return result.template.steps[index].plain_args()


# --- the request literal becomes a slot ------------------------------------------------------


def test_aligned_request_literal_becomes_a_typed_slot() -> None:
    result = compiled(plan(("delete_task", {"task_id": 4})), "delete task 4")
    assert args(result) == {"task_id": "${SLOT:task_id}"}
    assert result.template.slots == {
        "task_id": Slot(type="number", binding="request", required=True, source="4")
    }
    assert dict(result.bindings) == {"task_id": 4}
    assert result.spans["task_id"] == (12, 13)
    assert result.slot_sig == "number"
    assert result.effectful and not result.exact_only


def test_task_4_is_not_grounded_in_task_40() -> None:
    assert refused(plan(("delete_task", {"task_id": 4})), "delete task 40") == (
        "unaligned_effectful_literal"
    )


def test_default_deny_an_undeclared_argument_is_request() -> None:
    result = compiled(plan(("find_files", {"folder": "Projects"})), "files in Projects")
    assert args(result) == {"folder": "${SLOT:folder}"}
    assert result.template.slots["folder"].type == "text"


def test_structural_literal_stays() -> None:
    result = compiled(plan(("find_files", {"limit": 50, "sort": "newest"})), "find files")
    assert args(result) == {"limit": 50, "sort": "newest"}
    assert result.template.slots == {}
    assert not result.exact_only


def test_from_step_is_plan_structure() -> None:
    executed = plan(("find_files", {"pattern": "*.pdf"}), ("delete_files", {"from_step": 1}))
    result = compiled(executed, "find PDFs and delete them")
    assert args(result, 1) == {"from_step": 1}


def test_piped_and_runtime_refs_stay() -> None:
    executed = plan(
        ("find_files", {"pattern": "*.pdf"}),
        ("delete_files", {"paths": "${step1.entries.*.path}"}),
        ("send_message", {"to": "a@b.co", "sender": "${RUNTIME:actor_email}"}),
    )
    result = compiled(executed, "delete PDFs and mail a@b.co")
    assert args(result, 1) == {"paths": "${step1.entries.*.path}"}
    assert args(result, 2) == {"to": "${SLOT:to}", "sender": "${RUNTIME:actor_email}"}
    assert result.slot_sig == "email,glob"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("delete_files", {"paths": ["/tmp/a.pdf"]}),
        ("send_message", {"to": "a@b.co", "sender": "me@x.org"}),
        ("send_message", {"to": "a@b.co", "sender": "Ann ${RUNTIME:actor}"}),
    ],
)
def test_runtime_or_piped_literal_is_uncacheable(tool: str, arguments: dict[str, object]) -> None:
    request = "delete /tmp/a.pdf and mail a@b.co from me@x.org"
    assert refused(plan((tool, arguments)), request) == "runtime_literal"


def test_runtime_resolved_arguments_are_not_stored() -> None:
    result = compiled(plan(("send_message", {"to": "a@b.co", "account": "work"})), "mail a@b.co")
    assert "account" not in args(result)


def test_one_span_is_one_slot() -> None:
    executed = plan(
        ("find_messages", {"query": "a@b.co"}),
        ("send_message", {"to": "a@b.co", "body": "${step1.entries.0.text}"}),
    )
    result = compiled(executed, "forward the last mail from a@b.co to a@b.co")
    assert args(result, 0) == {"query": "${SLOT:query}"}
    assert args(result, 1)["to"] == "${SLOT:query}"
    assert list(result.template.slots) == ["query"]


def test_enum_argument_gets_an_enum_slot() -> None:
    result = compiled(plan(("find_messages", {"folder": "spam"})), "show mail in spam")
    assert result.template.slots["folder"].type == "enum:inbox|archive|spam"


def test_gazetteer_names_get_a_name_slot() -> None:
    executed = plan(("call_contact", {"who": "Ann"}))
    result = compiled(executed, "call Ann", gazetteers={"contacts": ["Ann", "Bob"]})
    assert result.template.slots["who"].type == "name:contacts"


def test_lists_and_objects_are_walked() -> None:
    executed = plan(
        ("send_message", {"to": ["a@b.co", "c@d.co"], "meta": {"subject": "Q3 report"}})
    )
    result = compiled(executed, 'mail a@b.co and c@d.co about "Q3 report"')
    assert args(result) == {
        "to": ["${SLOT:to_1}", "${SLOT:to_2}"],
        "meta": {"subject": "${SLOT:meta_subject}"},
    }
    assert result.template.slots["meta_subject"].type == "quoted"


def test_literal_pieces_around_refs_are_slotted() -> None:
    executed = plan(
        ("find_files", {"pattern": "*.pdf"}),
        ("send_message", {"to": "a@b.co", "body": "Projects: ${step1.@count}"}),
    )
    result = compiled(executed, "count PDFs in Projects and mail a@b.co")
    assert args(result, 1)["body"] == "${SLOT:body}: ${step1.@count}"


def test_model_prose_around_refs_in_an_effectful_step_is_uncacheable() -> None:
    executed = plan(("send_message", {"to": "a@b.co", "body": "Hi, ${step1.x} regards"}))
    assert refused(executed, "mail a@b.co") == "unaligned_effectful_literal"


# --- unaligned literals ------------------------------------------------------------------------


def test_unaligned_literal_in_an_effectful_step_is_uncacheable() -> None:
    executed = plan(("send_message", {"to": "a@b.co", "body": "Hello there"}))
    assert refused(executed, "mail a@b.co") == "unaligned_effectful_literal"


def test_unaligned_literal_in_read_only_steps_is_exact_only() -> None:
    result = compiled(plan(("find_files", {"folder": "/home/me/Projects"})), "files in Projects")
    assert result.exact_only
    assert args(result) == {"folder": "/home/me/Projects"}


def test_boolean_request_flag_is_unaligned() -> None:
    assert compiled(plan(("list_tasks", {"done": True})), "list done tasks").exact_only
    assert refused(plan(("delete_task", {"task_id": 4, "force": True})), "delete task 4") == (
        "unaligned_effectful_literal"
    )


def test_filler_in_an_effectful_step_is_uncacheable_and_fine_in_a_read() -> None:
    fillers: dict[str, object] = {"greet": {"prompt": "a greeting"}}
    effectful = plan(("send_message", {"to": "a@b.co", "body": "${FILLER:greet}"}), fillers=fillers)
    assert refused(effectful, "mail a@b.co") == "unaligned_effectful_literal"
    read = plan(("find_files", {"query": "${FILLER:greet}"}), fillers=fillers)
    assert compiled(read, "find files").template.fillers.keys() == {"greet"}


# --- absolute time -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "value"),
    [
        ("events today", "2024-05-17"),
        ("events today", "May 17, 2024"),
        ("events today", "17/05/2024"),
        ("events this morning", "09:00"),
        ("events today", 1_716_000_000),
        ("events on 2024-05-17", "2024-05-17"),  # said by the user: still refused by default
        ("events on May 17", "2024-05-17"),  # the year came from a clock
    ],
)
def test_absolute_time_is_uncacheable(request_text: str, value: object) -> None:
    assert refused(plan(("list_tasks", {"due": value})), request_text) == "absolute_time"


def test_absolute_date_in_a_structural_argument_is_uncacheable() -> None:
    executed = plan(("find_files", {"sort": "modified since 2024-01-01"}))
    assert refused(executed, "find files") == "absolute_time"


def test_request_date_may_become_a_date_slot_when_allowed() -> None:
    result = compiled(
        plan(("list_tasks", {"due": "2024-05-17"})), "tasks due May 17, 2024", request_dates=True
    )
    assert result.template.slots["due"].type == "date"
    assert refused(
        plan(("list_tasks", {"due": "2024-05-17"})), "tasks due today", request_dates=True
    ) == ("absolute_time")


def test_relative_window_and_time_of_day_from_the_request_are_slots() -> None:
    executed = plan(("list_tasks", {"when": "yesterday", "at": "10:30"}))
    result = compiled(executed, "tasks from yesterday at 10:30")
    assert result.slot_sig == "time,time_window"


def test_runtime_time_keys_are_fine() -> None:
    result = compiled(plan(("list_tasks", {"due": "${RUNTIME:today}"})), "tasks due today")
    assert args(result) == {"due": "${RUNTIME:today}"}


# --- refusals ---------------------------------------------------------------------------------


def test_context_bound_tools_are_uncacheable() -> None:
    assert refused(plan(("get_approval", {})), "approve it") == "context_bound_tool"
    assert refused(plan(("undo_last_change", {})), "undo that") == "context_bound_tool"
    assert "get_approval" in CONTEXT_BOUND


def test_context_bound_set_is_configurable() -> None:
    executed = plan(("list_tasks", {}))
    assert refused(executed, "list tasks", context_bound=frozenset({"list_tasks"})) == (
        "context_bound_tool"
    )


def test_unknown_tool_no_tool_step_and_failed_run() -> None:
    assert refused(plan(("shred_files", {})), "shred files") == "unknown_tool"
    assert refused(plan(("final_answer", {})), "hi") == "no_tool_step"
    failed = plan(("list_tasks", {}), meta={"failed_step": 1})
    assert refused(failed, "list tasks") == "failed_step"
    paused = plan(("list_tasks", {}), meta={"status": "paused"})
    assert refused(paused, "list tasks") == "failed_step"


def test_undeclared_slot_ref_is_uncacheable_and_a_declared_one_is_kept() -> None:
    assert refused(plan(("list_tasks", {"tag": "${SLOT:tag}"})), "list tasks") == (
        "undeclared_slot"
    )
    declared = plan(
        ("list_tasks", {"tag": "${SLOT:tag}"}),
        slots={"tag": {"type": "text", "source": "work"}},
    )
    result = compiled(declared, "list work tasks")
    assert result.template.slots["tag"].type == "text"


# --- final message -----------------------------------------------------------------------------


def test_final_message_literals_become_the_slots() -> None:
    executed = plan(("delete_task", {"task_id": 4}), final="Deleted task 4.")
    result = compiled(executed, "delete task 4")
    assert result.template.final_message == "Deleted task ${SLOT:task_id}."


def test_final_message_gets_a_companion_slot_for_another_spelling() -> None:
    executed = plan(("delete_task", {"task_id": 40}), final="Task #40 is gone")
    result = compiled(executed, "delete task #40")
    assert result.template.final_message == "Task ${SLOT:task_id_2} is gone"
    bound = bind(result.template.slots, "delete task #41", source_request="delete task #40")
    assert isinstance(bound, Bound)
    assert dict(bound.values) == {"task_id": 41, "task_id_2": "#41"}


def test_final_message_baked_values_are_refused() -> None:
    executed = plan(("list_tasks", {}), final="You have 12 tasks")
    assert compiled(executed, "list tasks").exact_only
    dated = plan(("list_tasks", {}), final="Tasks for 2024-05-17")
    assert refused(dated, "list tasks for today") == "absolute_time"


def test_final_message_request_word_without_a_slot_stays() -> None:
    executed = plan(("find_files", {"limit": 5}), final="Your 5 newest files")
    result = compiled(executed, "my 5 newest files")
    assert result.template.final_message == "Your 5 newest files"
    assert not result.exact_only
    miss = bind(result.template.slots, "my 7 newest files", source_request="my 5 newest files")
    assert isinstance(miss, BindMiss) and miss.reason == "binder_coverage"


# --- template -------------------------------------------------------------------------------


def test_template_meta_keeps_the_intent_and_drops_run_state() -> None:
    executed = plan(("list_tasks", {}), meta={"status": "ok", "source": "planner"})
    result = compiled(executed, "list tasks")
    assert dict(result.template.meta) == {"source": "planner", "intent_sig": "list:tasks"}


def test_the_executed_plan_is_not_changed() -> None:
    executed = plan(("delete_task", {"task_id": 4}))
    compiled(executed, "delete task 4")
    assert executed.steps[0].plain_args() == {"task_id": 4}


def test_template_round_trips_through_json() -> None:
    executed = plan(("find_files", {"folder": "Projects", "pattern": "*.pdf"}))
    result = compiled(executed, "find PDFs in Projects")
    again, errors = parse_plan(result.template.dumps())
    assert again is not None and not errors
    assert again.dumps() == result.template.dumps()


def test_compile_then_bind_serves_a_slot_variant() -> None:
    executed = plan(("find_files", {"folder": "Projects", "pattern": "*.pdf"}))
    result = compiled(executed, "find PDFs in Projects")
    bound = bind(
        result.template.slots, "find CSVs in Archive", source_request="find PDFs in Projects"
    )
    assert isinstance(bound, Bound)
    assert dict(bound.values) == {"folder": "Archive", "pattern": "*.csv"}


def test_slot_sig_is_sorted_types() -> None:
    executed = plan(("send_message", {"to": "a@b.co", "subject": "Q3", "count": 3}))
    result = compiled(executed, "mail a@b.co 3 lines about Q3")
    assert result.slot_sig == ",".join(sorted(["email", "id", "number"]))


def test_compile_works_on_the_normalised_request() -> None:
    from keel.plans.normalise import normalise

    executed = plan(("find_files", {"folder": "Projects", "pattern": "*.pdf"}))
    result = compile_plan(
        executed, request=normalise("Find PDFs in Projects!"), catalog=CATALOG, intent=Intent()
    )
    assert isinstance(result, Compiled) and not result.exact_only


def test_an_extension_word_before_files_becomes_a_glob_slot() -> None:
    executed = plan(("find_files", {"folder": "/tmp", "pattern": "*.tmp"}))
    result = compiled(executed, "list TMP files in /tmp")
    assert args(result) == {"folder": "${SLOT:folder}", "pattern": "${SLOT:pattern}"}
    assert result.template.slots["pattern"].type == "glob"
    assert not result.exact_only
    bound = bind(
        result.template.slots, "list CSV files in /docs", source_request="list TMP files in /tmp"
    )
    assert isinstance(bound, Bound) and bound.values == {"folder": "/docs", "pattern": "*.csv"}
    dotted = compiled(executed, "list the files ending in .tmp in /tmp")
    assert dotted.template.slots["pattern"].type == "glob"


def test_a_template_without_a_type_slot_does_not_serve_a_typed_request() -> None:
    result = compiled(plan(("find_files", {"folder": "/tmp"})), "list files in /tmp")
    assert set(result.template.slots) == {"folder"}
    for said in ("list TMP files in /tmp", "list files ending in .log in /tmp"):
        miss = bind(result.template.slots, said, source_request="list files in /tmp")
        assert isinstance(miss, BindMiss) and miss.reason == "binder_coverage", said


def test_a_date_said_without_a_year_is_absolute_time() -> None:
    assert refused(plan(("find_messages", {"query": "3/5"})), "mail from 3/5") == "absolute_time"
    baked = plan(("find_messages", {"folder": "inbox"}), final="Nothing since the 5th.")
    assert refused(baked, "show my inbox") == "absolute_time"
    month = plan(("find_messages", {"folder": "inbox"}), final="Nothing in March.")
    assert refused(month, "show my inbox") == "absolute_time"


@pytest.mark.parametrize(
    "request_text",
    [
        "alpha alpha alpha and",  # the binder would take the last "alpha", not "and"
        "tasks alpha and",  # a connector is no word the binder finds between neighbours
    ],
)
def test_a_slot_that_does_not_bind_back_on_its_own_request_is_exact_only(
    request_text: str,
) -> None:
    executed = plan(("list_tasks", {"query": "and ${RUNTIME:today}"}))
    result = compiled(executed, request_text)
    assert result.bindings == {"query": "and"}
    assert result.exact_only  # so it never reaches L1, where it would bind another span
    again = bind(result.template.slots, request_text, source_request=request_text)
    assert not (isinstance(again, Bound) and again.values == {"query": "and"})


def test_a_slot_that_binds_back_on_its_own_request_is_not_exact_only() -> None:
    result = compiled(plan(("list_tasks", {"query": "alpha"})), "tasks alpha please")
    assert not result.exact_only
    again = bind(result.template.slots, "tasks alpha please", source_request="tasks alpha please")
    assert isinstance(again, Bound) and again.values == {"query": "alpha"}
