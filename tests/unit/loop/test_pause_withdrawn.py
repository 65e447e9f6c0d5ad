"""A pause belongs to the skill frame that asked: when that frame leaves the stack the pause
is resolved as denied, and nothing can run the held call afterwards (spec §5.6).

Played on the support example (change plan, confirm `switch_plan`) with a scripted model,
an injected clock and a real SQLite file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from keel.events.fold import PENDING_CONFIRMATION_KEY
from keel.events.model import (
    Event,
    MemoryCleared,
    PausePointCreated,
    PausePointResolved,
    SessionStarted,
    StackChanged,
    ToolCallRefused,
    ToolExecuted,
)
from keel.ids import FakeClock
from keel.loop.errors import PauseNotPending, PauseWithdrawn
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.testing import ConversationHarness, ScriptedModel

SUPPORT = Path(__file__).resolve().parents[3] / "examples" / "support"


def _call(name: str, **args: object) -> dict[str, object]:
    return {"text": None, "tool_calls": [{"name": name, "arguments": args}]}


TO_THE_PAUSE = [
    _call("activate", target_id="verify_customer"),
    _call("set_fields", fields={"account_number": "BW100234"}),
    _call("set_fields", fields={"pin": "4821"}),
    _call("activate", target_id="change_plan"),
    _call("activate", target_id="pick_plan"),
    _call("switch_plan"),
]
MESSAGES = ["I'd like a faster plan", "BW100234", "4821", "upgrade my plan please"]
TAP = "set:session.change_plan.new_plan=fibre_500"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await open_store(f"sqlite:///{tmp_path / 'keel.db'}")
    yield opened
    await opened.close()


async def _paused(store: EventStore, model: ScriptedModel) -> tuple[ConversationHarness, str]:
    """A conversation paused on the `switch_plan` confirmation; returns it and the pause id."""
    harness = ConversationHarness(SUPPORT, model, store=store, clock=FakeClock())
    for text in [*MESSAGES, TAP]:
        await harness.send(text)
    pending = harness.state.pending_confirmation
    assert pending is not None and pending.tool_name == "switch_plan"
    assert harness.state.status == "paused"
    return harness, pending.pause_id


def _withdrawals(events: tuple[Event, ...], pause_id: str) -> list[PausePointResolved]:
    return [e for e in events if isinstance(e, PausePointResolved) and e.pause_id == pause_id]


def _switched(events: tuple[Event, ...]) -> list[ToolExecuted]:
    return [e for e in events if isinstance(e, ToolExecuted) and e.tool_name == "switch_plan"]


async def test_cancelling_the_skill_withdraws_its_pause(store: EventStore) -> None:
    model = ScriptedModel([*TO_THE_PAUSE, _call("cancel_skill"), "OK, I've cancelled that."])
    harness, pause_id = await _paused(store, model)
    result = await harness.send("cancel")
    [resolved] = _withdrawals(result.events, pause_id)
    assert resolved.approved is False
    assert resolved.metadata["reason"] == "skill_cancelled"
    cleared = [e.key for e in result.events if isinstance(e, MemoryCleared)]
    assert PENDING_CONFIRMATION_KEY in cleared
    assert harness.state.pending_confirmation is None
    assert PENDING_CONFIRMATION_KEY not in harness.state.memory
    assert harness.state.status == "idle" and harness.state.last_stop_reason == "end_turn"
    assert harness.bot_texts[-1] == "OK, I've cancelled that."

    # The approval API: refused with its own reason, and nothing runs.
    with pytest.raises(PauseWithdrawn) as refused:
        await harness.engine.resolve_pause(harness.conversation_id, pause_id, True)
    assert isinstance(refused.value, PauseNotPending)
    assert refused.value.reason == "skill_cancelled"

    # A stale "Yes" (the ask's button) reaches the model; resolving is not even offered.
    model.extend([_call("resolve_tool_confirmation", confirmed=True), "Nothing is waiting."])
    await harness.send("Yes")
    await harness.refresh()
    refusals = [e for e in harness.events if isinstance(e, ToolCallRefused)]
    assert refusals[-1].tool_name == "resolve_tool_confirmation"
    assert refusals[-1].code == "tool.not_offered"
    assert _switched(harness.events) == []
    assert harness.state.memory["project.plan_id"] == "fibre_100"
    assert len(_withdrawals(harness.events, pause_id)) == 1
    model.assert_complete()


async def test_a_cancel_and_a_resolve_in_one_reply_run_nothing(store: EventStore) -> None:
    both = {
        "text": None,
        "tool_calls": [
            {"name": "cancel_skill", "arguments": {}},
            {"name": "resolve_tool_confirmation", "arguments": {"confirmed": True}},
        ],
    }
    model = ScriptedModel([*TO_THE_PAUSE, both, "Cancelled."])
    harness, pause_id = await _paused(store, model)
    result = await harness.send("actually no, cancel, well yes")
    refused = [e for e in result.events if isinstance(e, ToolCallRefused)]
    assert [(e.tool_name, e.code) for e in refused] == [
        ("resolve_tool_confirmation", "confirmation.none_pending")
    ]
    assert _switched(harness.events) == []
    assert [e.approved for e in _withdrawals(harness.events, pause_id)] == [False]


async def test_a_session_that_expires_withdraws_its_pause(store: EventStore) -> None:
    model = ScriptedModel([*TO_THE_PAUSE, "Hello again, how can I help?"])
    harness, pause_id = await _paused(store, model)
    clock = harness.clock
    assert isinstance(clock, FakeClock)
    clock.advance(31 * 60)  # the example's sessions expire after 30 minutes
    result = await harness.send("hello?")
    started = next(i for i, e in enumerate(result.events) if isinstance(e, SessionStarted))
    [resolved] = _withdrawals(result.events, pause_id)
    assert result.events.index(resolved) > started
    assert resolved.approved is False and resolved.metadata["reason"] == "session_ended"
    assert harness.state.pending_confirmation is None
    assert harness.state.status == "idle"
    with pytest.raises(PauseWithdrawn):
        await harness.engine.resolve_pause(harness.conversation_id, pause_id, True)
    assert _switched(harness.events) == []


async def test_a_pause_whose_skill_is_still_parked_stays_pending(store: EventStore) -> None:
    """Parking is not leaving: the interrupted skill's frame stays on the stack."""
    model = ScriptedModel([*TO_THE_PAUSE, _call("activate", target_id="report_outage")])
    harness, pause_id = await _paused(store, model)
    await harness.send("wait, my internet is down")
    assert harness.state.pending_confirmation is not None
    assert _withdrawals(harness.events, pause_id) == []
    created = [e for e in harness.events if isinstance(e, PausePointCreated)]
    assert [e.pause_id for e in created] == [pause_id]


async def test_a_pause_left_without_its_skill_never_runs(store: EventStore) -> None:
    """A log where the skill frame is gone but the pause is still pending (written before
    pauses were withdrawn, or cut between the two appends): approving it runs nothing."""
    model = ScriptedModel(TO_THE_PAUSE)
    harness, pause_id = await _paused(store, model)
    last = await harness.store.last_seq(harness.conversation_id)
    await harness.store.append(harness.conversation_id, last, [StackChanged(frames=())])
    result = await harness.engine.resolve_pause(harness.conversation_id, pause_id, True)
    [resolved] = _withdrawals(result.events, pause_id)
    assert resolved.approved is False and resolved.metadata["reason"] == "skill_ended"
    assert _switched(result.events) == []
    assert result.state.pending_confirmation is None and result.state.status == "idle"
