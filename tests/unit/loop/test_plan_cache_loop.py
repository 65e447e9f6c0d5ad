"""The plan cache inside the turn loop: record, serve with no model call, plan with the model.

A real SQLite file holds the conversations and the plan cache; each "user" is a fresh
harness (a new engine) on that file, so what one conversation recorded serves the next.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from keel.events.model import (
    BotMessage,
    Event,
    PlanCacheDecided,
    PlanExecuted,
    ToolExecuted,
)
from keel.loop.errors import PauseNotPending
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).parent / "plans_agent"


def _world(harness: ConversationHarness) -> ModuleType:
    """The shop state this harness's tools use (each loaded project imports its own copy)."""
    skill = harness.definition.skill("orders")
    assert skill is not None
    return sys.modules[skill.tools["get_order"].func.__module__]


async def _store(tmp_path: Path) -> EventStore:
    return await open_store(f"sqlite:///{tmp_path / 'keel.db'}")


def _decisions(events: tuple[Event, ...] | list[Event]) -> list[tuple[str, bool, str]]:
    return [(e.layer, e.hit, e.reason) for e in events if isinstance(e, PlanCacheDecided)]


def _said(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, BotMessage)]


def _call(name: str, **args: object) -> dict[str, object]:
    return {"text": None, "tool_calls": [{"name": name, "arguments": args}]}


async def _user(
    store: EventStore, replies: list[object], cid: str, skill: str = "orders"
) -> tuple[ConversationHarness, ScriptedModel]:
    """A new user on `store` who opened `skill` with its slash command (the model greets)."""
    model = ScriptedModel(["Hi, how can I help?", *replies])  # type: ignore[list-item]
    harness = ConversationHarness(AGENT, model, store=store, conversation_id=cid)
    await harness.send(f"/{skill}")
    return harness, model


def _asked(model: ScriptedModel) -> int:
    """Model calls after the greeting."""
    return len(model.requests) - 1


async def test_a_loop_turn_is_recorded_and_an_exact_repeat_runs_with_no_model_call(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path)
    one, first = await _user(
        store, [_call("get_order", order_id="12"), "Order 12 is pending."], "c1"
    )
    result = await one.send("where is order 12?")
    assert ("l0", False, "no_entry") in _decisions(result.events)
    assert ("record", False, "recorded") in _decisions(result.events)
    first.assert_complete()

    two, silent = await _user(store, [], "c2")
    result = await two.send("where is order 12?")
    assert _asked(silent) == 0
    assert ("l0", True, "hit") in _decisions(result.events)
    runs = [e for e in result.events if isinstance(e, ToolExecuted)]
    assert [(r.tool_name, dict(r.arguments), r.metadata.get("plan")) for r in runs] == [
        ("get_order", {"order_id": "12"}, "l0")
    ]
    assert _said(result.events)[-1] == "Order 12 is pending."
    executed = next(e for e in result.events if isinstance(e, PlanExecuted))
    assert executed.status == "ok" and executed.source == "l0"

    _world(two).WORLD["12"]["status"] = "shipped"  # the cached plan re-reads the world
    result = await two.send("where is order 12?")
    assert _said(result.events)[-1] == "Order 12 is shipped."
    await store.close()


async def test_a_slot_variant_is_served_by_l1_only_after_an_approval(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    one, _ = await _user(store, [_call("get_order", order_id="12"), "Order 12 is pending."], "c1")
    result = await one.send("where is order 12?")
    turn_id = next(e.turn_id for e in result.events if e.kind == "turn_started")  # type: ignore[attr-defined]

    two, variant = await _user(
        store, [_call("get_order", order_id="56"), "Order 56 is pending."], "c2"
    )
    result = await two.send("where is order 56?")
    assert not any(hit for _, hit, _ in _decisions(result.events))  # no champion yet
    variant.assert_complete()

    changed = await one.engine.feedback("c1", turn_id, "approve")
    assert changed
    three, silent = await _user(store, [], "c3")
    result = await three.send("where is order 34?")
    assert _asked(silent) == 0
    assert ("l1", True, "hit") in _decisions(result.events)
    assert _said(result.events)[-1] == "Order 34 is delivered."
    await store.close()


async def test_the_planner_proposes_one_plan_that_is_repaired_once_then_run_and_cached(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path)
    bad = {"steps": [{"tool": "zap_order", "args": {"order_id": "12"}}], "final_message": "Done."}
    good = {
        "steps": [
            {"id": 1, "tool": "get_order", "args": {"order_id": "12"}},
            {"id": 2, "tool": "cancel_order", "args": {"order_id": "${step1.order_id}"}},
        ],
        "final_message": "Order ${step2.order_id} is now ${step2.status}.",
    }
    one, model = await _user(store, [json.dumps(bad), json.dumps(good)], "c1", "planned")
    result = await one.send("cancel order 12")
    model.assert_complete()
    repair = model.requests[2].messages[0]["content"]
    assert "plan.tool_unknown" in str(repair) and "zap_order" in str(repair)
    assert _said(result.events)[-1] == "Order 12 is now cancelled."
    assert _world(one).CALLS == [("get_order", "12"), ("cancel_order", "12")]
    assert ("l3", True, "proposed") in _decisions(result.events)
    assert ("record", False, "recorded") in _decisions(result.events)

    two, model = await _user(store, ["Order 12 was already cancelled."], "c2", "planned")
    result = await two.send("cancel order 12")
    assert _asked(model) == 0
    assert _said(result.events)[-1] == "Order 12 is now cancelled."
    assert _world(two).CALLS == [("get_order", "12"), ("cancel_order", "12")]
    # Again: the cancel now fails after the read; nothing committed, so the model takes over.
    result = await two.send("cancel order 12")
    executed = next(e for e in result.events if isinstance(e, PlanExecuted))
    assert (executed.source, executed.status, executed.committed) == ("l0", "failed", ())
    assert _asked(model) == 1 and _said(result.events)[-1] == "Order 12 was already cancelled."
    await store.close()


async def test_a_plan_paused_for_confirmation_goes_on_after_the_approval_exactly_once(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path)
    plan = {
        "steps": [
            {"id": 1, "tool": "cancel_order", "args": {"order_id": "12"}},
            {"id": 2, "tool": "refund_order", "args": {"order_id": "${step1.order_id}"}},
            {"id": 3, "tool": "get_order", "args": {"order_id": "12"}},
        ],
        "final_message": "Order ${step3.order_id} is now ${step3.status}.",
    }
    one, _ = await _user(store, [json.dumps(plan)], "c1", "planned")
    result = await one.send("cancel and refund order 12")
    assert result.state.pending_confirmation is not None
    assert _world(one).CALLS == [("cancel_order", "12")]  # then it asked before refunding
    pause_id = result.state.pending_confirmation.pause_id
    executed = next(e for e in result.events if isinstance(e, PlanExecuted))
    assert (executed.source, executed.status, executed.committed) == ("l3", "paused", (1,))
    approved = await one.engine.resolve_pause("c1", pause_id, True)
    # The cancel is not repeated (journal); the refund runs once; the plan goes on.
    assert _world(one).CALLS == [
        ("cancel_order", "12"),
        ("refund_order", "12"),
        ("get_order", "12"),
    ]
    assert _said(approved.events)[-1] == "Order 12 is now refunded."
    assert ("record", False, "recorded") in _decisions(approved.events)
    with pytest.raises(PauseNotPending):
        await one.engine.resolve_pause("c1", pause_id, True)
    assert len(_world(one).CALLS) == 3
    await store.close()


async def test_a_denied_plan_step_runs_nothing_after_it(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    plan = {
        "steps": [
            {"id": 1, "tool": "refund_order", "args": {"order_id": "34"}},
            {"id": 2, "tool": "get_order", "args": {"order_id": "34"}},
        ],
        "final_message": "Refunded.",
    }
    one, _ = await _user(store, [json.dumps(plan)], "c1", "planned")
    result = await one.send("refund order 34")
    pause = result.state.pending_confirmation
    assert pause is not None
    denied = await one.engine.resolve_pause("c1", pause.pause_id, False)
    assert _world(one).CALLS == []
    assert not any(isinstance(e, PlanExecuted) for e in denied.events)
    await store.close()


async def test_bad_arguments_from_a_plan_never_reach_the_tool(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    plan = {
        "steps": [{"id": 1, "tool": "get_order", "args": {"order_id": 12}}],
        "final_message": "x",
    }
    one, model = await _user(
        store, [json.dumps(plan), json.dumps(plan), "I could not look that up."], "c1", "planned"
    )
    result = await one.send("where is order 12")
    assert _world(one).CALLS == []
    assert ("l3", False, "validator:plan.type_mismatch") in _decisions(result.events)
    assert _said(result.events)[-1] == "I could not look that up."
    model.assert_complete()
    await store.close()


def _cancel_both() -> dict[str, object]:
    """Cancel 12 (pending: commits), then 34 (delivered: fails)."""
    return {
        "steps": [
            {"id": 1, "tool": "cancel_order", "args": {"order_id": "12"}},
            {"id": 2, "tool": "cancel_order", "args": {"order_id": "34"}},
        ],
        "final_message": "Both cancelled.",
    }


async def test_after_a_committed_effect_a_failed_plan_resumes_with_a_plan_for_the_rest(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path)
    rest = {
        "steps": [{"id": 1, "tool": "get_order", "args": {"order_id": "34"}}],
        "final_message": "Order 12 is cancelled; order 34 is ${step1.status}, so it stays.",
    }
    one, model = await _user(store, [json.dumps(_cancel_both()), json.dumps(rest)], "c1", "planned")
    result = await one.send("cancel orders 12 and 34")
    model.assert_complete()
    hint = str(model.requests[2].messages[0]["content"])
    assert "already done, never repeat: step 1 cancel_order" in hint
    assert _world(one).CALLS == [
        ("cancel_order", "12"),
        ("cancel_order", "34"),
        ("get_order", "34"),
    ]
    assert ("l3", True, "recovery") in _decisions(result.events)
    assert _said(result.events)[-1] == "Order 12 is cancelled; order 34 is delivered, so it stays."
    runs = [e for e in result.events if isinstance(e, PlanExecuted)]
    assert [(r.status, r.committed) for r in runs] == [("failed", (1,)), ("ok", ())]
    await store.close()


async def test_a_recovery_that_could_repeat_a_committed_effect_is_refused_and_reported(
    tmp_path: Path,
) -> None:
    store = await _store(tmp_path)
    again = {"steps": [{"id": 1, "tool": "cancel_order", "args": {"order_id": "56"}}]}
    one, _ = await _user(store, [json.dumps(_cancel_both()), json.dumps(again)], "c1", "planned")
    result = await one.send("cancel orders 12 and 34")
    assert _world(one).CALLS == [("cancel_order", "12"), ("cancel_order", "34")]
    assert ("l3", False, "recovery_refused") in _decisions(result.events)
    assert _said(result.events)[-1] == (
        "I could not finish that: cancel_order. Already done: cancel_order. Nothing was repeated."
    )
    await store.close()


async def test_editing_the_skill_retires_its_cached_plans(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    shutil.copytree(AGENT, agent)
    store = await _store(tmp_path)
    looked_up = [_call("get_order", order_id="12"), "Order 12 is pending."]
    one = ConversationHarness(
        agent, ScriptedModel(["Hi.", *looked_up]), store=store, conversation_id="c1"
    )  # type: ignore[list-item]
    await one.send("/orders")
    await one.send("where is order 12?")
    skill = agent / "skills" / "orders" / "skill.md"
    skill.write_text(skill.read_text() + "\nAlways give the order's status.\n")
    model = ScriptedModel(["Hi.", *looked_up])  # type: ignore[list-item]
    two = ConversationHarness(agent, model, store=store, conversation_id="c2")
    await two.send("/orders")
    result = await two.send("where is order 12?")
    assert ("l0", False, "signature") in _decisions(result.events)
    model.assert_complete()  # the model planned again
    await store.close()


async def test_a_filler_is_asked_once_per_request_and_kept_for_repeats(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    plan = {
        "steps": [{"id": 1, "tool": "get_order", "args": {"order_id": "12"}}],
        "fillers": {"tone": {"prompt": "Say one friendly word.", "default": "Hello"}},
        "final_message": "${FILLER:tone}! Order 12 is ${step1.status}.",
    }
    one, model = await _user(store, [json.dumps(plan), "Howdy"], "c1", "planned")
    result = await one.send("where is order 12")
    assert _said(result.events)[-1] == "Howdy! Order 12 is pending."
    purposes = [e.metadata.get("purpose") for e in result.events if e.kind == "model_called"]
    assert purposes == ["planner", "filler"]
    result = await one.send("where is order 12")
    assert ("l0", True, "hit") in _decisions(result.events)
    assert _said(result.events)[-1] == "Howdy! Order 12 is pending."
    assert _asked(model) == 2  # the repeat asked nothing: plan and filler were kept
    await store.close()
