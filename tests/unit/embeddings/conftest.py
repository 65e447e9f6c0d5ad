"""One local embedder for the embeddings tests (its model loads once per test process)."""

from __future__ import annotations

import pytest

from keel.embeddings.local import LocalEmbedder


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()
