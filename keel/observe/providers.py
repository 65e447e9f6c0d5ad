"""Which provider served a model call, for `gen_ai.provider.name`.

`model_called` names the concrete model and the tier, not the provider; the project's model
groups say it. A model id no group declares (a scripted model, a provider's dated id that
no declared id starts) is `_OTHER`, the conventions' value for an unnamed provider.
"""

from __future__ import annotations

from functools import lru_cache

from keel.llm.tiers import group_id_for
from keel.llm.usage import spec_for
from keel.observe.genai import OTHER_PROVIDER
from keel.observe.tap import ProviderOf
from keel.project.definition import AgentDefinition


def provider_lookup(definition: AgentDefinition) -> ProviderOf:
    """(model id, tier) -> provider name, from `definition`'s model groups (memoised)."""
    integrations = definition.integrations

    @lru_cache(maxsize=256)
    def provider_of(model: str, tier: str) -> str:
        group_id = group_id_for(integrations, tier)
        spec = spec_for(integrations, model, group_id=group_id)
        if spec is None:
            group = integrations.group(group_id)
            starts = [m for m in group.models if model.startswith(m.model)] if group else []
            spec = max(starts, key=lambda m: len(m.model)) if starts else None
        return spec.provider if spec is not None else OTHER_PROVIDER

    return provider_of
