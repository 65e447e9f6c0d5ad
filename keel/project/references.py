"""`references:` in agent.yml: the knowledge index's embedding group and chunking."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from keel.source.diagnostics import Diagnostic, diag
from keel.source.reporter import Reporter, key_line, read_str, warn_unknown_keys

if TYPE_CHECKING:
    from keel.project.integrations import IntegrationsConfig

DEFAULT_CHUNK_SIZE = 1000
DEFAULT_CHUNK_OVERLAP = 20
REFERENCES_KEYS = frozenset({"embeddings", "chunking", "instructions"})
CHUNKING_KEYS = frozenset({"chunk_size", "chunk_overlap"})
LOCAL_PROVIDERS = frozenset({"local"})
"""`provider:` values of the local embedder (`keel.embeddings.local`)."""
LOCAL_EMBEDDING_MODELS = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})
REMOTE_EMBEDDING_PROVIDERS = frozenset(
    {"openai", "openai_compatible", "self_hosted", "ollama", "llamacpp", "llama_cpp", "vllm"}
)
"""Providers served by the OpenAI embeddings adapter (as `keel.llm.factory` names them)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ChunkingConfig:
    """How reference documents are cut, in characters."""

    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_overlap: int = DEFAULT_CHUNK_OVERLAP


@dataclass(frozen=True, kw_only=True, slots=True)
class ReferencesConfig:
    """Knowledge-index settings."""

    embeddings: str | None = None
    """Id of the model group used for embeddings (None: the local embedder)."""
    embeddings_line: int | None = None
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
        embeddings_line=key_line(data, "embeddings"),
        chunking=_chunking(r, data.get("chunking"), key_line(data, "chunking")),
        instructions=read_str(r, data, "instructions", code, where="references."),
    )


def merge_references(
    top: ReferencesConfig, nested: ReferencesConfig, top_keys: set[object]
) -> ReferencesConfig:
    """`top` (the top-level `references`) with `nested` (`agent.references`) supplying each
    key `top_keys` (the keys written at the top level) does not hold."""
    return ReferencesConfig(
        embeddings=top.embeddings if "embeddings" in top_keys else nested.embeddings,
        embeddings_line=top.embeddings_line if "embeddings" in top_keys else nested.embeddings_line,
        chunking=top.chunking if "chunking" in top_keys else nested.chunking,
        instructions=top.instructions if "instructions" in top_keys else nested.instructions,
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


def check_embeddings(
    references: ReferencesConfig, integrations: IntegrationsConfig
) -> list[Diagnostic]:
    """`references.embeddings` names a declared model group whose first model can embed."""
    group_id, line = references.embeddings, references.embeddings_line
    if group_id is None:
        return []
    group = integrations.group(group_id)
    if group is None or not group.models:
        message = f"`references.embeddings` names model group `{group_id}`, which is not declared"
        return [diag("config.references.unknown_group", "agent.yml", line, message, key=group_id)]
    spec = group.models[0]
    provider = spec.provider.strip().lower().replace("-", "_").replace(".", "_").replace(" ", "_")
    if provider in LOCAL_PROVIDERS and spec.model in LOCAL_EMBEDDING_MODELS:
        return []
    remote = provider in REMOTE_EMBEDDING_PROVIDERS or (
        provider.startswith("openai") and spec.api_base is not None
    )
    if remote:
        return []
    message = (
        f"model group `{group_id}` cannot embed: its model is `{spec.provider}`/`{spec.model}`; "
        "use provider `local` with `all-MiniLM-L6-v2`, or `openai` (or OpenAI-compatible)"
    )
    return [diag("config.references.bad_embedder", "agent.yml", line, message, key=group_id)]
