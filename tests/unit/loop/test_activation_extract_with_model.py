"""With a model and `extraction.enabled: true`, the entries the model's `activate` left unset
are read from the message by their `extract:` extractors (`keel.loop.activation_fill`);
under `auto` (the default) a model's activation extracts nothing and the collect asks."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from keel.events.model import BotMessage, SlotSet
from keel.project.definition import AgentDefinition
from keel.project.offline_config import Enabled, OfflineConfig
from keel.testing import ConversationHarness, ScriptedModel, load_definition

LIBRARY = Path(__file__).resolve().parents[2] / "conversations" / "agents" / "library"


def _library(extraction: Enabled) -> AgentDefinition:
    definition = load_definition(LIBRARY)
    config = replace(definition.config, offline=OfflineConfig(extraction=extraction))
    return replace(definition, config=config)


def _turn(extraction: Enabled) -> ConversationHarness:
    activate = {"name": "activate", "arguments": {"target_id": "renew_loan"}}
    model = ScriptedModel([{"tool_calls": [activate]}])
    harness = ConversationHarness(_library(extraction), model)
    asyncio.run(harness.send("can I extend my loan on B-10002"))
    model.assert_complete()
    return harness


@pytest.mark.parametrize(
    ("extraction", "asked", "filled"),
    [("always", "For how many weeks?", "B-10002"), ("auto", "Which book?", None)],
)
def test_extraction_after_the_models_activate(
    extraction: Enabled, asked: str, filled: str | None
) -> None:
    harness = _turn(extraction)
    said = [e.text for e in harness.events if isinstance(e, BotMessage)]
    assert said == [asked]
    assert harness.state.memory.get("renew_loan.book_id") == filled
    slots = [e for e in harness.events if isinstance(e, SlotSet)]
    assert [s.filled_by for s in slots] == (["extractor"] if filled else [])
