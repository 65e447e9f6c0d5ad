"""`references:` in agent.yml: the knowledge index's embedding group and chunking."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from keel.project.reporter import Reporter, key_line, read_str, warn_unknown_keys

DEFAULT_CHUNK_SIZE = 1000
DEFAULT_CHUNK_OVERLAP = 20
REFERENCES_KEYS = frozenset({"embeddings", "chunking", "instructions"})
CHUNKING_KEYS = frozenset({"chunk_size", "chunk_overlap"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ChunkingConfig:
    """How reference documents are cut, in characters."""

    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP


@dataclass(frozen=True, kw_only=True, slots=True)
class ReferencesConfig:
    """Knowledge-index settings."""

    embeddings: str | None = None
    """Id of the model group used for embeddings (checked against integrations.yml later)."""
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    instructions: str | None = None
    """Older builds: how to answer from snippets."""


def parse_references(r: Reporter, data: Any, line: int | None) -> ReferencesConfig:
    """Read the `references` mapping."""
    if data is None:
        return ReferencesConfig()
    if not isinstance(data, dict):
        r.error("config.references.bad_value", line, "`references` must be a mapping")
        return ReferencesConfig()
    warn_unknown_keys(
        r, data, REFERENCES_KEYS, "config.references.unknown_key", where="references."
    )
    code = "config.references.bad_value"
    return ReferencesConfig(
        embeddings=read_str(r, data, "embeddings", code, where="references."),
        chunking=_chunking(r, data.get("chunking"), key_line(data, "chunking")),
        instructions=read_str(r, data, "instructions", code, where="references."),
    )


def _chunking(r: Reporter, data: Any, line: int | None) -> ChunkingConfig:
    code = "config.references.bad_chunking"
    if data is None:
        return ChunkingConfig()
    if not isinstance(data, dict):
        r.error(code, line, "`references.chunking` must be a mapping")
        return ChunkingConfig()
    for key in data:
        if key not in CHUNKING_KEYS:
            message = (
                f"unknown key `references.chunking.{key}` (allowed: chunk_size, chunk_overlap)"
            )
            r.error(code, key_line(data, key), message, key=f"references.chunking.{key}")
    size = _count(r, data, "chunk_size", DEFAULT_CHUNK_SIZE, minimum=1)
    overlap = _count(r, data, "chunk_overlap", DEFAULT_CHUNK_OVERLAP, minimum=0)
    if overlap >= size:
        message = f"chunk_overlap ({overlap}) must be smaller than chunk_size ({size})"
        r.error(code, key_line(data, "chunk_overlap"), message, key="references.chunking")
        return ChunkingConfig()
    return ChunkingConfig(chunk_size=size, chunk_overlap=overlap)


def _count(r: Reporter, data: dict[Any, Any], key: str, default: int, *, minimum: int) -> int:
    value = data.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return value
    message = f"`references.chunking.{key}` must be a whole number >= {minimum}"
    r.error("config.references.bad_chunking", key_line(data, key), message)
    return default
