"""With no model, a skill that needs one is said plainly; "Here is what I can do:" follows
only when something can be offered. examples/support served with `NoModel` and the offline
router: before the customer is verified no skill that runs without a model is eligible, so
the reply to a model-bound skill ends with the needs-model sentence, not a lead-in with
nothing after it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from keel.embeddings.local import LocalEmbedder
from keel.llm.none import NoModel
from keel.routing.router import OfflineRouter
from keel.testing import ConversationHarness

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "support"


def _bot_actions(harness: ConversationHarness, text: str) -> list[str | None]:
    result = asyncio.run(harness.send(text))
    return [message.utter_action for message in result.bot_messages]


def test_no_empty_offer_when_nothing_runs_without_a_model(embedder: LocalEmbedder) -> None:
    harness = ConversationHarness(SUPPORT, NoModel())
    harness.engine.router = OfflineRouter.of(embedder)  # as `keel run --model none` serves it
    _bot_actions(harness, "/session_start")
    actions = _bot_actions(harness, "my internet is down")
    assert actions == ["utter_skill_needs_model"], actions
    assert "Here is what I can do:" not in harness.bot_texts


def test_a_tapped_skill_that_needs_a_model_is_said_before_its_questions(
    embedder: LocalEmbedder,
) -> None:
    harness = ConversationHarness(SUPPORT, NoModel())
    harness.engine.router = OfflineRouter.of(embedder)
    _bot_actions(harness, "/session_start")
    # report_outage's block opens with a question, which needs no model; the skill needs one
    # later, so the tap is answered plainly instead of asking (its activation message stays).
    actions = _bot_actions(harness, "/report_outage")
    assert actions == ["utter_outage_sorry", "utter_skill_needs_model"], actions
    assert harness.state.active_skill_id is None
