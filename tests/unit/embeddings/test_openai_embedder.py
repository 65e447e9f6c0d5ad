"""`OpenAIEmbedder` through the official SDK against a loopback server of the wire format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from embeddings_server import serve_embeddings, toy_vectors

from keel.embeddings.factory import build_embedder
from keel.embeddings.local import LocalEmbedder
from keel.embeddings.openai_embedder import BATCH_SIZE, OpenAIEmbedder
from keel.embeddings.port import EmbeddingError
from keel.project.envvars import Secret
from keel.project.model_groups import ModelSpec


async def test_vectors_come_back_normalised_and_in_input_order() -> None:
    with serve_embeddings(reverse=True) as server:
        embedder = OpenAIEmbedder(model="toy-embed", base_url=server.base_url)
        vectors = await embedder.embed(["aaa", "bbb", ""])
        await embedder.close()
    body = server.requests[0]
    assert body["model"] == "toy-embed" and body["encoding_format"] == "float"
    assert body["input"] == ["aaa", "bbb", " "] and "dimensions" not in body
    assert vectors.shape == (3, 32) and vectors.dtype == np.float32
    assert vectors[0][0] == pytest.approx(1.0) and vectors[1][1] == pytest.approx(1.0)
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0)


async def test_batches_dimensions_and_key() -> None:
    texts = [f"text {i}" for i in range(BATCH_SIZE + 3)]
    with serve_embeddings() as server:
        embedder = OpenAIEmbedder(
            model="text-embedding-3-large",
            api_key="sk-test",
            base_url=server.base_url,
            dimensions=8,
        )
        assert embedder.dimension == 8
        vectors = await embedder.embed(texts)
        await embedder.close()
    assert [len(r["input"]) for r in server.requests] == [BATCH_SIZE, 3]
    assert all(r["dimensions"] == 8 for r in server.requests)
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert vectors.shape == (BATCH_SIZE + 3, 8)


async def test_same_vectors_as_the_local_embedder_over_the_wire() -> None:
    local = LocalEmbedder()

    def served(texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
        return local.encode(list(texts)).tolist()

    texts = ["My internet is down", "How do I pay my bill?"]
    with serve_embeddings(served) as server:
        remote = OpenAIEmbedder(model="all-minilm", base_url=server.base_url)
        assert remote.dimension == 0  # unknown until the first answer
        vectors = await remote.embed(texts)
        assert remote.dimension == 384
        await remote.close()
    assert np.allclose(vectors, local.encode(texts), atol=1e-6)


async def test_an_api_error_is_an_embedding_error() -> None:
    with serve_embeddings() as server:
        server.fail(400, "This model does not exist")
        embedder = OpenAIEmbedder(model="nope", base_url=server.base_url)
        with pytest.raises(EmbeddingError, match="does not exist"):
            await embedder.embed(["x"])
        await embedder.close()


async def test_a_wrong_shape_is_an_embedding_error() -> None:
    def short(texts: Sequence[str], dimensions: int | None) -> list[list[float]]:
        return toy_vectors(texts, 4)

    with serve_embeddings(short) as server:
        embedder = OpenAIEmbedder(
            model="text-embedding-3-small", base_url=server.base_url
        )  # expects 1536
        with pytest.raises(EmbeddingError, match="shape"):
            await embedder.embed(["x"])
        await embedder.close()


def test_fingerprint_names_model_dimensions_and_server() -> None:
    a = OpenAIEmbedder(model="text-embedding-3-small", api_key="k")
    b = OpenAIEmbedder(model="text-embedding-3-small", base_url="http://127.0.0.1:9/v1")
    c = OpenAIEmbedder(model="text-embedding-3-small", api_key="k", dimensions=256)
    assert a.fingerprint == "openai:text-embedding-3-small:native@api.openai.com"
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert a.name == "openai:text-embedding-3-small" and a.dimension == 1536


def _spec(provider: str, model: str, **extra: object) -> ModelSpec:
    return ModelSpec(provider=provider, model=model, line=1, **extra)  # type: ignore[arg-type]


def test_model_entries_build_embedders() -> None:
    local = build_embedder(_spec("local", "all-MiniLM-L6-v2"))
    assert isinstance(local, LocalEmbedder)
    remote = build_embedder(
        _spec("vllm", "bge", api_base="http://127.0.0.1:9/v1", extra={"dimensions": "64"})
    )
    assert isinstance(remote, OpenAIEmbedder) and remote.dimension == 64
    keyed = build_embedder(_spec("openai", "text-embedding-3-small", api_key=Secret(value="sk-x")))
    assert isinstance(keyed, OpenAIEmbedder)
    for bad in (_spec("anthropic", "claude"), _spec("local", "bge-small"), _spec("openai", "e")):
        with pytest.raises(EmbeddingError):
            build_embedder(bad)


async def test_an_agent_configured_for_remote_embeddings_searches_through_them(
    tmp_path: Path,
) -> None:
    from keel.knowledge.service import ProjectKnowledge
    from keel.knowledge.store import InMemoryIndexStore
    from keel.testing.harness import load_definition

    with serve_embeddings() as server:
        files = {
            "agent.yml": "agent:\n  id: remote\n  persona: Test.\nreferences:\n"
            "  embeddings: vectors\n",
            "integrations.yml": "llm:\n  model_group: main\nmodel_groups:\n"
            "  - id: main\n    models:\n      - {provider: scripted, model: scripted}\n"
            "  - id: vectors\n    models:\n      - provider: openai_compatible\n"
            f"        model: toy-embed\n        api_base: {server.base_url}\n",
            "references/a.md": "# Zebras\n\nzzz zebra zone\n\n# Apples\n\naaa apple",
        }
        for rel, text in files.items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text, encoding="utf-8")
        knowledge = ProjectKnowledge.for_definition(load_definition(tmp_path))
        knowledge.store = InMemoryIndexStore()
        assert isinstance(knowledge.embedder, OpenAIEmbedder)
        sections = await knowledge.search("zebra zone")
    assert sections[0].heading == "Zebras"
    assert server.requests[0]["model"] == "toy-embed" and len(server.requests[0]["input"]) == 2
    assert server.requests[-1]["input"] == ["zebra zone"]
