"""Building, reusing and searching the index: fingerprints, incremental rebuilds, sources."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from knowledge_kit import SHOP, ToyEmbedder, write_project

from keel.knowledge.build import ensure_index, fingerprint
from keel.knowledge.service import ProjectKnowledge, index_store_for
from keel.knowledge.sources import Document, read_documents, reference_files
from keel.knowledge.store import SHARED_MEMORY_STORE, InMemoryIndexStore
from keel.project.references import ChunkingConfig


def _knowledge(root: Path, embedder: ToyEmbedder, store: InMemoryIndexStore) -> ProjectKnowledge:
    return ProjectKnowledge(
        root=root, name="shop", chunking=ChunkingConfig(), embedder=embedder, store=store
    )


def test_sources_are_the_project_and_skill_references_sorted(tmp_path: Path) -> None:
    write_project(tmp_path, SHOP)
    rel = [p.relative_to(tmp_path).as_posix() for p in reference_files(tmp_path)]
    assert rel == [
        "references/more/delivery.md",
        "references/shop.md",
        "skills/orders/references/orders.md",
    ]


def test_the_fingerprint_follows_content_chunking_and_embedder() -> None:
    docs = [Document(source="references/a.md", text="# A\n\nx")]
    base = fingerprint(docs, ChunkingConfig(), "e1")
    assert base == fingerprint(list(docs), ChunkingConfig(), "e1")
    assert base != fingerprint(
        [Document(source="references/a.md", text="# A\n\ny")], ChunkingConfig(), "e1"
    )
    assert base != fingerprint(
        [Document(source="references/b.md", text="# A\n\nx")], ChunkingConfig(), "e1"
    )
    assert base != fingerprint(docs, ChunkingConfig(chunk_size=500), "e1")
    assert base != fingerprint(docs, ChunkingConfig(), "e2")


async def test_rebuilt_only_on_change_and_only_changed_chunks_embedded(tmp_path: Path) -> None:
    root = write_project(tmp_path, SHOP)
    store, embedder = InMemoryIndexStore(), ToyEmbedder()
    progress: list[tuple[int, int]] = []
    first = await _knowledge(root, embedder, store).prepare(lambda d, t: progress.append((d, t)))
    assert (first.rebuilt, first.chunks, first.embedded, first.reused) == (True, 4, 4, 0)
    assert progress[0] == (0, 4) and progress[-1] == (4, 4)
    again = await _knowledge(root, embedder, store).prepare()
    assert (again.rebuilt, again.embedded) == (False, 0) and embedder.calls == 1
    (root / "references/shop.md").write_text(
        SHOP["references/shop.md"].replace("thirty", "sixty"), encoding="utf-8"
    )
    edited = await _knowledge(root, embedder, store).prepare()
    assert (edited.rebuilt, edited.embedded, edited.reused) == (True, 1, 3)
    assert "sixty" in embedder.embedded[-1]
    other = ToyEmbedder(version="2")
    switched = await _knowledge(root, other, store).prepare()
    assert (switched.embedded, switched.reused) == (4, 0)


async def test_concurrent_first_searches_build_once(tmp_path: Path) -> None:
    root = write_project(tmp_path, SHOP)
    embedder = ToyEmbedder()
    knowledge = _knowledge(root, embedder, InMemoryIndexStore())
    results = await asyncio.gather(*(knowledge.search("returns receipt") for _ in range(3)))
    assert len(set(results)) == 1
    # The four chunks once (one build), then the query once (query vectors are cached).
    assert len(embedder.embedded) == 4 + 1 and embedder.embedded[-1] == "returns receipt"
    section = results[0][0]
    assert (section.source, section.heading) == ("references/shop.md", "Returns")
    assert section.text.startswith("# Returns")


async def test_a_failing_query_embedding_falls_back_to_keywords(tmp_path: Path) -> None:
    root = write_project(tmp_path, SHOP)
    embedder = ToyEmbedder()
    knowledge = _knowledge(root, embedder, InMemoryIndexStore())
    await knowledge.prepare()
    embedder.fail = True
    hits = await knowledge.hits("order numbers")
    assert hits[0].chunk.heading == "Order numbers"
    assert all(h.cosine == 0.0 and h.bm25 > 0 for h in hits)


async def test_a_failing_build_raises_and_is_retried_next_time(tmp_path: Path) -> None:
    from keel.embeddings.port import EmbeddingError

    root = write_project(tmp_path, SHOP)
    embedder = ToyEmbedder()
    embedder.fail = True
    knowledge = _knowledge(root, embedder, InMemoryIndexStore())
    with pytest.raises(EmbeddingError):
        await knowledge.search("returns")
    embedder.fail = False
    assert await knowledge.search("returns")


async def test_documents_without_sections_and_empty_files(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"references/a.md": "", "references/b.md": "plain text"})
    assert [d.source for d in read_documents(root)] == ["references/a.md", "references/b.md"]
    stored, report = await ensure_index(
        name="x",
        documents=read_documents(root),
        chunking=ChunkingConfig(),
        embedder=ToyEmbedder(),
        store=InMemoryIndexStore(),
        now=lambda: 0.0,
    )
    assert report.chunks == 1 and stored.chunks[0].heading == "" and stored.vectors.shape == (1, 64)


def test_the_index_store_follows_the_event_store() -> None:
    from keel.stores.memory import InMemoryEventStore

    assert index_store_for(InMemoryEventStore()) is SHARED_MEMORY_STORE
    assert index_store_for(None) is SHARED_MEMORY_STORE


async def test_search_results_are_json_friendly(tmp_path: Path) -> None:
    root = write_project(tmp_path, SHOP)
    knowledge = _knowledge(root, ToyEmbedder(), InMemoryIndexStore())
    sections = await knowledge.search("delivery post")
    payload = json.dumps([{"source": s.source, "heading": s.heading} for s in sections])
    assert "references/more/delivery.md" in payload
