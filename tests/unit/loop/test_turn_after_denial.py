"""The turn after a denied `execute_tool` step (spec §5.6 step 3, §7.3).

The denial ends the turn and holds the block; the steps it has left run with the next
message. Those steps are what is left of the denied request, not an answer to the new
message: when they complete the skill, `default_completed` does not ask "anything
else?", and the message is handled as any message with an empty stack (offline routing,
the model). Played on the conversation tests' pizza-shop agent (its `payout` block pays
behind a confirmation, then says `Payout step done.`), with a real SQLite file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from keel.events.model import BotMessage, Event, RoutingDecided, SkillActivated, SkillCompleted
from keel.llm.none import NoModel
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).resolve().parents[2] / "conversations" / "agents" / "steps"
ASK_CONTINUE = "utter_ask_wants_to_continue"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await open_store(f"sqlite:///{tmp_path / 'keel.db'}")
    yield opened
    await opened.close()


def _said(events: tuple[Event, ...]) -> list[str]:
    return [e.text for e in events if isinstance(e, BotMessage)]


def _asked_to_continue(events: tuple[Event, ...]) -> bool:
    return any(isinstance(e, BotMessage) and e.utter_action == ASK_CONTINUE for e in events)


async def test_a_denial_through_the_approval_api_then_the_next_message_is_answered(
    store: EventStore,
) -> None:
    model = ScriptedModel(["We take pizza orders and pay out prizes."])
    harness = ConversationHarness(AGENT, model, store=store)
    await harness.send("/payout")
    pending = harness.state.pending_confirmation
    assert pending is not None and pending.tool_name == "pay"

    denied = await harness.engine.resolve_pause(harness.conversation_id, pending.pause_id, False)
    assert _said(denied.events) == ["No payout then."]
    assert model.requests == ()  # the denial was uttered: nothing for the model to word

    later = await harness.send("what do you do here?")
    assert _said(later.events) == [
        "Payout step done.",
        "We take pizza orders and pay out prizes.",
    ]
    assert any(isinstance(e, SkillCompleted) and e.skill_id == "payout" for e in later.events)
    assert not any(
        isinstance(e, SkillActivated) and e.skill_id == "default_completed" for e in later.events
    )
    assert len(model.requests) == 1
    assert harness.state.stack == ()


async def test_with_no_model_the_next_message_is_routed_not_met_with_a_question(
    store: EventStore,
) -> None:
    harness = ConversationHarness(AGENT, NoModel(), store=store)
    await harness.send("/payout")
    denied = await harness.send("no")  # settled by code with no model: a plain no
    assert _said(denied.events) == ["No payout then."]

    routed = await harness.send("I want a pizza")
    # The block's last step, then the message handled as any message with nothing active:
    # routed by code to the pizza order, which is said at once to need a model (its name
    # collect has no extractor, its topping step is instructions), with what can run.
    assert _said(routed.events) == [
        "Payout step done.",
        "Sorry, I can't help with that here (Order a pizza): it needs an AI model, and this "
        "assistant runs without one.",
        "Here is what I can do:",
    ]
    assert not _asked_to_continue(routed.events)
    decided = [e for e in routed.events if isinstance(e, RoutingDecided)]
    assert [(e.source, e.skill_id) for e in decided][-1:] == [("router", "order")]
