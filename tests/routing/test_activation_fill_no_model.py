"""Facts the user already gave, with no model: the conversation tests of
`conversations/activation_fill_no_model.yml` run against the library test agent served
with `NoModel` (as `--model none` serves it), routed by the offline router on the local
embedder; the typed extractors fill the started skill's collect entries from the message."""

from __future__ import annotations

from pathlib import Path

from keel.embeddings.local import LocalEmbedder
from keel.llm.none import NoModel
from keel.routing.router import OfflineRouter
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.conversation import run_test_file

FILE = Path(__file__).resolve().parent / "conversations" / "activation_fill_no_model.yml"


def test_collect_entries_are_filled_from_the_activating_message(embedder: LocalEmbedder) -> None:
    def no_model(agent: Path, script: ScriptedModel) -> ConversationHarness:
        del script  # nothing may call a model
        harness = ConversationHarness(agent, NoModel())
        harness.engine.router = OfflineRouter.of(embedder)
        return harness

    result = run_test_file(FILE, no_model)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert len(result.results) == 4, lines
    assert result.failed == 0, lines
