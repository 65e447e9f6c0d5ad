"""The texts a skill is routed by, and their vectors, embedded once per project and embedder.

A skill is described by its `name`, its `description` split into sentences, each quoted
phrase of the description ("where is my order") on its own, and its `examples:`. Vectors
are cached in memory under the embedder's fingerprint and the texts themselves, so a
changed skill or another embedder gives a new entry and an unchanged project is embedded
once per process.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from keel.embeddings.port import Embedder, Vectors
from keel.skills.model import SkillDocument

_QUOTED = re.compile(r"[\"“]([^\"”]{3,})[\"”]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
CACHE_LIMIT = 32
"""Projects (texts x embedder) kept in memory at most."""


def skill_texts(document: SkillDocument) -> tuple[str, ...]:
    """What `document` is routed by (see the module docstring), without duplicates."""
    description = " ".join(document.description.split())
    quoted = [m.group(1).strip(" .,") for m in _QUOTED.finditer(description)]
    plain = _QUOTED.sub("", description)
    sentences = [s.strip(" ,.") for s in _SENTENCE.split(plain) if len(s.strip(" ,.")) > 3]
    texts: list[str] = []
    for text in (document.name, *sentences, *quoted, *document.examples):
        if text and text not in texts:
            texts.append(text)
    return tuple(texts)


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillIndex:
    """Every text of every skill, its skill, and its vector (rows in the same order)."""

    skill_ids: tuple[str, ...]
    """The skill of each row."""
    texts: tuple[str, ...]
    vectors: Vectors


_CACHE: dict[str, SkillIndex] = {}
_LOCK = threading.Lock()


def _key(fingerprint: str, rows: Sequence[tuple[str, str]]) -> str:
    digest = hashlib.sha256(fingerprint.encode())
    for skill_id, text in rows:
        digest.update(f"{skill_id}\x00{text}\x01".encode())
    return digest.hexdigest()


async def build_index(embedder: Embedder, documents: Sequence[SkillDocument]) -> SkillIndex:
    """The index of `documents` (from the cache when these texts were embedded already)."""
    rows = [(d.skill_id, text) for d in documents for text in skill_texts(d)]
    key = _key(embedder.fingerprint, rows)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    vectors = await embedder.embed([text for _, text in rows])
    index = SkillIndex(
        skill_ids=tuple(s for s, _ in rows),
        texts=tuple(t for _, t in rows),
        vectors=np.asarray(vectors, dtype=np.float32),
    )
    with _LOCK:
        if len(_CACHE) >= CACHE_LIMIT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = index
    return index


def scores(index: SkillIndex, query: Vectors, allowed: Sequence[str]) -> dict[str, float]:
    """Per allowed skill, the best cosine similarity of `query` (one row) to its texts."""
    sims = index.vectors @ query[0]
    best: dict[str, float] = {skill_id: -1.0 for skill_id in allowed}
    for skill_id, sim in zip(index.skill_ids, sims.tolist(), strict=True):
        if skill_id in best and sim > best[skill_id]:
            best[skill_id] = float(sim)
    return best
