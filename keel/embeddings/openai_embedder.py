"""`OpenAIEmbedder`: the `Embedder` port over the Embeddings API (`embeddings.create`).

    embedder = OpenAIEmbedder(model="text-embedding-3-small", api_key=key)
    vectors = await embedder.embed(["How do I reset my router?"])

Built on the official `openai` SDK (`AsyncOpenAI.embeddings.create`, `encoding_format:
"float"`); OpenAI-compatible servers work through `base_url`. Texts go in batches of
`BATCH_SIZE`; the rows come back ordered by their `index`, whatever the server's order.
Empty texts are sent as a single space (the API rejects empty input). The SDK's own
retries (2, with backoff) handle transient failures; what is left is an `EmbeddingError`.

The dimension is the `dimensions` given (sent to the API, for the models that can shorten
their vectors), else the model's known size (`KNOWN_DIMENSIONS`), else what the first
response shows. The fingerprint names the model, the requested dimensions and the server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

import numpy as np
import openai

from keel.embeddings.port import EmbeddingError, Vectors, normalize_rows

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "sk-no-key-required"
"""Sent when no key is given (local OpenAI-compatible servers ignore it)."""
BATCH_SIZE = 256
"""Texts per request (the API accepts up to 2048)."""
KNOWN_DIMENSIONS: Mapping[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """An `Embedder` answered by an OpenAI(-compatible) embeddings endpoint."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        timeout: float = 60.0,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.model = model
        self._dimensions = dimensions
        self._dimension = dimensions or KNOWN_DIMENSIONS.get(model, 0)
        self._base_url = base_url or DEFAULT_BASE_URL
        self._client = client or openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_API_KEY, base_url=self._base_url, timeout=timeout
        )

    @property
    def name(self) -> str:
        """`openai:<model>`."""
        return f"openai:{self.model}"

    @property
    def dimension(self) -> int:
        """Vector length (0 until known, for a model of unknown size before its first call)."""
        return self._dimension

    @property
    def fingerprint(self) -> str:
        """`openai:<model>:<dimensions or native>@<server host>`."""
        host = urlsplit(self._base_url).netloc or self._base_url
        return f"openai:{self.model}:{self._dimensions or 'native'}@{host}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """See `Embedder.embed`."""
        parts = [
            await self._batch(list(texts[i : i + BATCH_SIZE]))
            for i in range(0, len(texts), BATCH_SIZE)
        ]
        if not parts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    async def _batch(self, texts: list[str]) -> Vectors:
        try:
            response = await self._client.embeddings.create(
                model=self.model,
                input=[text or " " for text in texts],
                encoding_format="float",
                dimensions=self._dimensions if self._dimensions else openai.omit,
            )
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"embeddings from {self.name} failed: {exc}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        if [row.index for row in rows] != list(range(len(texts))):
            raise EmbeddingError(f"{self.name} returned {len(rows)} vectors for {len(texts)} texts")
        matrix = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if matrix.ndim != 2 or (self._dimension and matrix.shape[1] != self._dimension):
            raise EmbeddingError(f"{self.name} returned vectors of shape {matrix.shape}")
        self._dimension = int(matrix.shape[1])
        return normalize_rows(matrix)

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._client.close()
