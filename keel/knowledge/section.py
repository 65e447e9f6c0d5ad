"""What a knowledge search answers, and the port the turn loop asks (spec §7.5).

`search_knowledge` asks the agent's `KnowledgeBase` for the sections that answer a query.
The implementation is `keel.knowledge.service.ProjectKnowledge` (hybrid BM25 and vector
search over `references/**/*.md`, indexed in the SQL layer); tests give their own. This
module imports nothing heavy, so the loop can name the port without loading numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, kw_only=True, slots=True)
class KnowledgeSection:
    """One retrieved piece of reference text."""

    source: str
    """Where it comes from, e.g. `references/returns.md`."""
    text: str
    heading: str = ""
    """The heading path of its section, e.g. `Returns > Damaged books` (may be empty)."""


class KnowledgeBase(Protocol):
    """Answers `search_knowledge`."""

    async def search(self, query: str) -> tuple[KnowledgeSection, ...]:
        """The sections (best first, with their sources) that match `query`; may be empty."""
        ...
