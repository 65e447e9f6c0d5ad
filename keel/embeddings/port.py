"""The `Embedder` port: texts in, unit-length float32 vectors out.

The port is **async**: the remote embedder (`OpenAIEmbedder`) does network IO, and the
local one (`LocalEmbedder`) runs its numpy work in a worker thread, so a turn waiting for a
query vector never blocks the event loop that serves other conversations. Programs that
are not async (benchmarks, scripts) call `LocalEmbedder.encode` directly.

`fingerprint` names the exact vector space: two embedders with the same fingerprint give
the same vectors for the same text. The knowledge index stores it and is rebuilt when it
changes (another model, other weights, another dimension, another implementation version).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from keel.errors import KeelError

Vectors = NDArray[np.float32]
"""A `(len(texts), dimension)` float32 matrix whose rows have length 1 (or are all zero)."""


class EmbeddingError(KeelError):
    """Embeddings could not be computed (missing weights, a failed or malformed API call)."""

    code = "keel.embeddings"


class Embedder(Protocol):
    """Turns texts into vectors of one fixed vector space."""

    @property
    def name(self) -> str:
        """A readable name, e.g. `all-MiniLM-L6-v2` or `openai:text-embedding-3-small`."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    @property
    def fingerprint(self) -> str:
        """Identifies the vector space (see the module docstring); stable across processes."""
        ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text, in order; `(0, dimension)` for no texts."""
        ...


def normalize_rows(matrix: NDArray[np.floating]) -> Vectors:
    """`matrix` as float32 with every non-zero row scaled to length 1."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.asarray(out / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)
