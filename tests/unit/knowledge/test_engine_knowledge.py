"""`search_knowledge` through the engine: the index lives in the event store's database."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sqlalchemy import select

from keel.embeddings.port import EmbeddingError
from keel.events.model import ToolExecuted
from keel.knowledge.section import KnowledgeSection
from keel.knowledge.service import ProjectKnowledge
from keel.knowledge.sql_store import SqlIndexStore
from keel.stores.sqlite import SqliteEventStore
from keel.stores.tables import knowledge_chunks, knowledge_indexes
from keel.testing.harness import ConversationHarness
from keel.testing.scripted import ScriptedModel

AGENT = Path(__file__).resolve().parents[2] / "conversations" / "agents" / "knowledge"


async def test_search_knowledge_indexes_into_sqlite_and_returns_sections(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    shutil.copytree(AGENT, project)
    store = await SqliteEventStore.open(tmp_path / "keel.db")
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "returns"}}]},
            {"text": "Within thirty days."},
        ]
    )
    harness = ConversationHarness(project, model, store=store)
    knowledge = harness.engine.knowledge
    assert isinstance(knowledge, ProjectKnowledge)
    assert isinstance(knowledge.store, SqlIndexStore)
    await harness.send("how do returns work?")
    executed = [e for e in harness.events if isinstance(e, ToolExecuted)]
    payload = json.loads(executed[0].result)
    assert payload == [
        {
            "source": "references/shop.md",
            "heading": "Returns",
            "text": "# Returns\n\nBooks can be returned within thirty days with the receipt.",
        }
    ]
    # The search results are in the request's closing system message (its volatile part).
    prompt = str(model.requests[-1].messages[-1]["content"])
    assert "### [1] references/shop.md (Returns)" in prompt
    async with store.engine.connect() as conn:
        head = (await conn.execute(select(knowledge_indexes))).one()
        rows = (await conn.execute(select(knowledge_chunks.c.heading))).scalars().all()
    assert head.name == "knowledge-test" and head.dimension == 384 and head.chunk_count == 2
    assert rows == ["Opening hours", "Returns"]
    await store.close()


class _Broken:
    async def search(self, query: str) -> tuple[KnowledgeSection, ...]:
        raise EmbeddingError("the embeddings server is down")


async def test_a_failing_knowledge_base_is_an_error_result_and_no_knowledge_mode() -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "hours"}}]},
            {"text": "Sorry, I cannot look that up right now."},
        ]
    )
    harness = ConversationHarness(AGENT, model)
    harness.engine.knowledge = _Broken()
    await harness.send("when are you open?")
    executed = [e for e in harness.events if isinstance(e, ToolExecuted)]
    assert "search_knowledge failed: the embeddings server is down" in executed[0].result
    # The search results are in the request's closing system message (its volatile part).
    prompt = str(model.requests[-1].messages[-1]["content"])
    assert "## Answer from knowledge" not in prompt
    assert harness.bot_texts[-1] == "Sorry, I cannot look that up right now."
