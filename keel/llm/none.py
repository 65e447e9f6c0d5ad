"""`NoModel`: the model of an agent served with none (`keel run --model none`).

The loop never sends it a request: where it would, the offline router, the typed
extractors and fixed replies take over (`keel.loop.offline`). Called anyway, it raises.
"""

from __future__ import annotations

from keel.llm.errors import ModelError
from keel.llm.port import Model, ModelRequest, ModelResponse


class NoModelConfigured(ModelError):
    """A request reached an agent that runs without a model."""

    code = "keel.model.none"


class NoModel:
    """Stands where a model would; `has_model` tells the loop there is none."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Never answers."""
        raise NoModelConfigured("this agent runs without a model")


def has_model(model: Model) -> bool:
    """False for `NoModel`, True for every real (or scripted) model."""
    return not isinstance(model, NoModel)
