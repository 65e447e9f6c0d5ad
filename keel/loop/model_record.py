"""The `model_called` record of one finished model round trip (pure).

The loop's calls (`keel.loop.model_call`) and the rephrase calls (`keel.loop.rephrase`)
record the same facts: the model that answered, the tier, tokens (cached ones included),
latency, cost, and in `metadata` the request as sent and the reply.
"""

from __future__ import annotations

from collections.abc import Mapping

from keel.events.base import JsonValue
from keel.events.model import ModelCalled
from keel.llm.port import ModelRequest, ModelResponse
from keel.llm.usage import cost_of
from keel.project.model_groups import ModelSpec


def model_called(
    request: ModelRequest,
    response: ModelResponse,
    *,
    spec: ModelSpec | None,
    elapsed_ms: float,
    metadata: Mapping[str, JsonValue],
) -> ModelCalled:
    """The record of `request` answered by `response` in `elapsed_ms` (`spec` prices it)."""
    usage = response.usage
    return ModelCalled(
        model=response.model,
        tier=request.tier,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        latency_ms=elapsed_ms,
        cost=cost_of(spec, usage),
        metadata=metadata,
    )
