"""The knowledge base as the turn loop sees it: the `KnowledgeBase` port.

`search_knowledge` (spec §7.5) asks the agent's knowledge base for the sections that
answer a query. The implementation is `keel.knowledge.ProjectKnowledge` (hybrid BM25 and
vector search over `references/**/*.md`, indexed in the SQL layer); it is imported only
when a project has reference documents, so agents without them never load numpy or the
embedding model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from keel.knowledge.sources import reference_files
from keel.loop.prompt import KnowledgeSection

if TYPE_CHECKING:
    from keel.project.definition import AgentDefinition


class KnowledgeBase(Protocol):
    """Answers `search_knowledge`."""

    async def search(self, query: str) -> tuple[KnowledgeSection, ...]:
        """The sections (best first, with their sources) that match `query`; may be empty."""
        ...


def has_knowledge(root: Path) -> bool:
    """The project has a knowledge base (at least one reference document)."""
    return bool(reference_files(root))


def project_knowledge(definition: AgentDefinition, event_store: object) -> KnowledgeBase | None:
    """The agent's knowledge base stored beside `event_store`, or None without references."""
    if not has_knowledge(definition.root):
        return None
    from keel.knowledge.service import ProjectKnowledge

    return ProjectKnowledge.for_definition(definition, event_store)


__all__ = ["KnowledgeBase", "has_knowledge", "project_knowledge", "reference_files"]
