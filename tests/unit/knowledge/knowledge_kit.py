"""Helpers for the knowledge tests: a counting toy embedder and tiny projects on disk."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from keel.embeddings.port import EmbeddingError, Vectors, normalize_rows


class ToyEmbedder:
    """An `Embedder` of word hashes (same words, same direction); counts what it embeds."""

    def __init__(self, *, version: str = "1", dimension: int = 64) -> None:
        self.version = version
        self.embedded: list[str] = []
        self.calls = 0
        self.fail = False
        self._dimension = dimension

    @property
    def name(self) -> str:
        return "toy"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def fingerprint(self) -> str:
        return f"toy:{self.version}:{self._dimension}"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.fail:
            raise EmbeddingError("toy embedder is down")
        self.calls += 1
        self.embedded.extend(texts)
        rows = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.sha256(word.strip(".,?!#>").encode()).digest()
                rows[i, digest[0] % self._dimension] += 1.0
        return normalize_rows(rows)


def write_project(root: Path, files: Mapping[str, str]) -> Path:
    """Write `files` (relative path -> text) under `root`; returns `root`."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


SHOP = {
    "references/shop.md": (
        "# Opening hours\n\nThe shop is open from nine to six, Monday to Saturday.\n\n"
        "# Returns\n\nBooks can be returned within thirty days with the receipt.\n"
    ),
    "references/more/delivery.md": "# Delivery\n\nOrders ship in two days by post.\n",
    "skills/orders/references/orders.md": "# Order numbers\n\nOrder numbers start with BK.\n",
    "skills/_draft/references/draft.md": "# Draft\n\nNot indexed.\n",
}
