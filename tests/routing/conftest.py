"""One local embedder for the routing tests (the weights load once per session)."""

from __future__ import annotations

import pytest
import routing_kit  # noqa: F401  (puts the retail project and the bench on sys.path)

from keel.embeddings.local import LocalEmbedder


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()
