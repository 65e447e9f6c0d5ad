"""A harness factory that puts the real `TieredModel` between the engine and the script.

`keel test`'s own factory hands the engine the `ScriptedModel` itself, so a request's tier
never resolves to a model group and every `model_called` names the model `scripted`. Here
the engine talks to `keel.llm.factory.TieredModel` built from the agent's
`integrations.yml`; each model group answers from the test's script, as if it were the
group's primary model. So a test sees what production sees: `request.tier` as the engine
chose it (the `tier:` request check), the concrete model id the tier resolved to and the
cost of the call at that model's prices (`model_called.model`, `.cost`).

ScriptedModel replies carry no token usage, so every group answers with the fixed
`FAKE_USAGE` (2000 input, 500 output tokens): a call's cost is then
`2000 * input_cost_per_token + 500 * output_cost_per_token` of the model that answered.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from keel.llm.factory import TieredModel
from keel.llm.port import Model, ModelRequest, ModelResponse, Usage
from keel.project.definition import AgentDefinition
from keel.project.model_groups import ModelGroup
from keel.testing import ConversationHarness, ScriptedModel, load_definition

FAKE_USAGE = Usage(input_tokens=2000, output_tokens=500)
"""The usage every scripted call reports."""


class ScriptedGroup:
    """One model group answering from the shared script."""

    def __init__(self, script: ScriptedModel, group: ModelGroup) -> None:
        self.script = script
        self.group = group

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The script's next reply; the model id is left for `TieredModel` to fill in."""
        response = await self.script.complete(request)
        return replace(response, model="", usage=FAKE_USAGE)


_DEFINITIONS: dict[Path, AgentDefinition] = {}


def tiered_model(definition: AgentDefinition, script: ScriptedModel) -> TieredModel:
    """A `TieredModel` for the agent whose every group answers from `script`."""

    def build(group: ModelGroup) -> Model:
        return ScriptedGroup(script, group)

    return TieredModel(definition.integrations, build=build)


def make_tiered_harness(agent_path: Path, script: ScriptedModel) -> ConversationHarness:
    """A runner harness factory: a fresh conversation whose model is a `TieredModel`."""
    key = Path(agent_path).resolve()
    definition = _DEFINITIONS.get(key)
    if definition is None:
        definition = _DEFINITIONS[key] = load_definition(key)
    return ConversationHarness(definition, tiered_model(definition, script))
