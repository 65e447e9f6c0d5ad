"""`ProjectKnowledge`: an agent's knowledge base as the turn loop uses it.

    knowledge = ProjectKnowledge.for_definition(definition, event_store)
    report = await knowledge.prepare(progress)        # optional: build up front
    sections = await knowledge.search("how do I pay my bill?")

The index is prepared on first use (`prepare`, or the first `search`), once per instance:
concurrent first searches wait for one build. It reflects the reference files as they were
then; a restart picks up edits (and rebuilds only if they changed the fingerprint). A
search embeds the query (`Embedder.embed`), ranks the chunks (`KnowledgeIndex.rank`) and
returns the best sections with their sources. If the query cannot be embedded (a remote
embedder failing), the search falls back to BM25 alone and logs a warning; a build that
fails raises `EmbeddingError` / `StoreError` to the caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from keel.embeddings.factory import embedder_for
from keel.embeddings.port import Embedder, EmbeddingError
from keel.ids import Clock, SystemClock
from keel.knowledge.build import BuildReport, Progress, ensure_index
from keel.knowledge.chunking import Chunk
from keel.knowledge.index import TOP_K, Hit, KnowledgeIndex, Mode
from keel.knowledge.section import KnowledgeSection
from keel.knowledge.sources import read_documents
from keel.knowledge.store import SHARED_MEMORY_STORE, IndexStore
from keel.project.references import ChunkingConfig

if TYPE_CHECKING:
    from keel.project.definition import AgentDefinition

_log = logging.getLogger(__name__)

QUERY_CACHE = 256
"""Query vectors remembered per knowledge base (a repeated question is not embedded again)."""


class ProjectKnowledge:
    """The knowledge base of one agent project: its index, embedder and store."""

    def __init__(
        self,
        *,
        root: Path,
        name: str,
        chunking: ChunkingConfig,
        embedder: Embedder,
        store: IndexStore,
        clock: Clock | None = None,
        top_k: int = TOP_K,
    ) -> None:
        self.root = root
        self.name = name
        """The index's name in the store (the agent's id)."""
        self.chunking = chunking
        self.embedder = embedder
        self.store = store
        self.top_k = top_k
        self._clock: Clock = clock or SystemClock()
        self._index: KnowledgeIndex | None = None
        self._queries: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._report: BuildReport | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def for_definition(
        cls, definition: AgentDefinition, event_store: object = None, *, clock: Clock | None = None
    ) -> ProjectKnowledge:
        """The agent's knowledge base: its configured embedder (`references.embeddings`, else
        the local one), stored beside `event_store` when that is a SQL store, else in the
        process-wide in-memory store."""
        return cls(
            root=definition.root,
            name=definition.config.id or definition.root.name,
            chunking=definition.config.references.chunking,
            embedder=embedder_for(definition),
            store=index_store_for(event_store),
            clock=clock,
        )

    async def prepare(self, progress: Progress | None = None) -> BuildReport:
        """Load or build the index (once per instance); what was done."""
        async with self._lock:
            if self._report is None:
                stored, self._report = await ensure_index(
                    name=self.name,
                    documents=read_documents(self.root),
                    chunking=self.chunking,
                    embedder=self.embedder,
                    store=self.store,
                    now=lambda: self._clock.now().timestamp(),
                    progress=progress,
                )
                self._index = KnowledgeIndex(stored.chunks, stored.vectors)
            return self._report

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The indexed chunks (empty until `prepare` ran)."""
        return self._index.chunks if self._index is not None else ()

    async def hits(
        self, query: str, *, top_k: int | None = None, mode: Mode = "hybrid"
    ) -> list[Hit]:
        """The ranked hits for `query` (see `KnowledgeIndex.rank`)."""
        await self.prepare()
        index = self._index
        assert index is not None
        vector = await self._query_vector(query) if mode != "bm25" and len(index) else None
        return index.rank(query, vector, top_k=top_k or self.top_k, mode=mode)

    async def _query_vector(self, query: str) -> NDArray[np.float32] | None:
        """The query's vector (the last `QUERY_CACHE` queries are remembered), or None when
        the embedder fails."""
        cached = self._queries.get(query)
        if cached is not None:
            self._queries.move_to_end(query)
            return cached
        try:
            vector: NDArray[np.float32] = (await self.embedder.embed([query]))[0]
        except EmbeddingError as exc:
            _log.warning("knowledge search falls back to keywords: %s", exc)
            return None
        self._queries[query] = vector
        if len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector

    async def search(self, query: str) -> tuple[KnowledgeSection, ...]:
        """The best sections for `query`, with their sources (the `search_knowledge` tool)."""
        return tuple(
            KnowledgeSection(source=h.chunk.source, heading=h.chunk.heading, text=h.chunk.text)
            for h in await self.hits(query)
        )


def index_store_for(event_store: object) -> IndexStore:
    """The SQL index store on `event_store`'s database when it is a SQL event store, else the
    process-wide in-memory store."""
    engine = getattr(event_store, "engine", None)
    if engine is None:
        return SHARED_MEMORY_STORE
    from keel.knowledge.sql_store import SqlIndexStore  # lazy: SQLAlchemy

    return SqlIndexStore(engine)
