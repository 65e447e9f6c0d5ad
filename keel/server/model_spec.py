"""The model a server runs with: `scripted:FILE`, or the agent's own model groups.

`scripted:FILE` loads a `keel.testing.ScriptedModel` (demos, tests); `none` serves the
agent with no model at all (`keel.llm.none.NoModel`: offline routing, typed extractors and
fixed replies where a model would be asked). Without a spec the
model comes from the agent's `integrations.yml` through `keel.llm.factory.TieredModel`,
every tier built at startup so a bad configuration (say, a missing API key) stops the
server with a clear message instead of failing the first conversation.
"""

from __future__ import annotations

from pathlib import Path

from keel.errors import KeelError
from keel.llm.factory import TieredModel
from keel.llm.none import NoModel
from keel.llm.port import Model
from keel.project.definition import AgentDefinition
from keel.testing.scripted import InvalidScript, ScriptedModel


class ModelSpecError(KeelError, ValueError):
    """The model cannot be built from the spec or the agent's configuration."""

    code = "keel.server.model"


def build_model(spec: str | None, definition: AgentDefinition) -> Model:
    """The model `spec` names (see the module docstring); raises `ModelSpecError`."""
    if spec is None:
        return _tiered(definition)
    if spec == "none":
        return NoModel()
    kind, _, rest = spec.partition(":")
    if kind == "scripted" and rest:
        return _scripted(Path(rest))
    raise ModelSpecError(f"unknown model {spec!r}; expected scripted:FILE or none")


def _scripted(path: Path) -> Model:
    try:
        return ScriptedModel.from_file(path)
    except InvalidScript as exc:
        lines = "\n".join(d.render() for d in exc.diagnostics)
        raise ModelSpecError(f"model script {path} cannot be used:\n{lines}") from None


def _tiered(definition: AgentDefinition) -> Model:
    try:
        model = TieredModel(definition.integrations)
        # Build every tier's group now, so a bad configuration stops the server at startup.
        model.build_all()
    except KeelError as exc:
        raise ModelSpecError(
            f"the agent's models cannot be used: {exc} (serve it without a model: --model none)"
        ) from exc
    return model
