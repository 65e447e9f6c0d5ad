"""The embedder an agent uses: `references.embeddings` in agent.yml names a model group.

| first model of the group | embedder |
| --- | --- |
| none configured (no `references.embeddings`) | `LocalEmbedder` (all-MiniLM-L6-v2) |
| `provider: local` (`model: all-MiniLM-L6-v2`) | `LocalEmbedder` |
| `provider: openai`, or OpenAI-compatible (`keel.llm.factory`) | `OpenAIEmbedder` |

An OpenAI model entry's `api_base`, key (`api_key_env` / `api_key`) and optional
`dimensions:` are used as for chat models.

Other providers cannot embed; `keel validate` reports them (`config.references.bad_embedder`)
and `embedder_for` raises `EmbeddingError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keel.embeddings.local import LocalEmbedder
from keel.embeddings.port import Embedder, EmbeddingError
from keel.llm.errors import ModelConfigError
from keel.llm.factory import LOCAL_BASE_URLS, api_key_of, normalized, provider_kind
from keel.project.references import LOCAL_EMBEDDING_MODELS, LOCAL_PROVIDERS

if TYPE_CHECKING:
    from keel.project.definition import AgentDefinition
    from keel.project.model_groups import ModelSpec


def embedder_for(definition: AgentDefinition) -> Embedder:
    """The embedder `definition` configures (see the module docstring)."""
    group_id = definition.config.references.embeddings
    if group_id is None:
        return _local()
    group = definition.integrations.group(group_id)
    if group is None or not group.models:
        raise EmbeddingError(f"references.embeddings names model group {group_id!r}, not declared")
    return build_embedder(group.models[0])


def build_embedder(spec: ModelSpec) -> Embedder:
    """The embedder for one model entry."""
    if normalized(spec.provider) in LOCAL_PROVIDERS:
        if spec.model not in LOCAL_EMBEDDING_MODELS:
            raise EmbeddingError(f"the local embedder runs all-MiniLM-L6-v2, not {spec.model!r}")
        return _local()
    kind = provider_kind(spec)
    if kind not in ("openai", "openai_compatible"):
        raise EmbeddingError(f"provider {spec.provider!r} cannot embed; use openai or local")
    try:
        api_key = api_key_of(spec)
    except ModelConfigError as exc:
        raise EmbeddingError(str(exc)) from exc
    base_url = spec.api_base or LOCAL_BASE_URLS.get(normalized(spec.provider))
    if kind == "openai" and base_url is None and api_key is None:
        raise EmbeddingError(f"model `{spec.model}`: provider `openai` needs an API key")
    from keel.embeddings.openai_embedder import OpenAIEmbedder  # lazy: the OpenAI SDK

    return OpenAIEmbedder(
        model=spec.model, api_key=api_key, base_url=base_url, dimensions=_dimensions(spec)
    )


def _dimensions(spec: ModelSpec) -> int | None:
    value = spec.extra.get("dimensions")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.isdigit() and int(value) > 0:
        return int(value)
    return None


def _local() -> Embedder:
    return LocalEmbedder()
