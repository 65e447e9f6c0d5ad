"""Harness factories whose model speaks HTTP to an `OpenAIWireServer`.

The runner hands each test a fresh `ScriptedModel`; the factory points the server at it
and gives the engine a real `OpenAIChatModel` (official `openai` SDK) whose `base_url` is
the server, so every model call of a conversation test crosses the Chat Completions wire
and comes back as the script's reply. With `stream=True` the engine is given an observer,
which makes it use the adapter's `stream()` (SSE); the text deltas it passes on are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from keel.events.base import JsonValue
from keel.llm.factory import TieredModel
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import Model
from keel.loop.result import TurnResult
from keel.project.definition import AgentDefinition
from keel.project.model_groups import ModelGroup
from keel.stores.port import StoredEvent
from keel.testing import ConversationHarness, ScriptedModel, load_definition
from keel.testing.openai_wire_server import OpenAIWireServer

TIMEOUT = 5.0
"""Seconds the adapter waits for the local server."""


class DeltaRecorder:
    """A `TurnObserver` that keeps the streamed text deltas."""

    def __init__(self) -> None:
        self.deltas: list[str] = []

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        """Events are read from the log afterwards."""

    async def text_delta(self, text: str) -> None:
        """Keep one piece of streamed text."""
        self.deltas.append(text)

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """Not needed here."""


class WireHarness(ConversationHarness):
    """A `ConversationHarness` over HTTP models; streams when it has an observer."""

    def __init__(
        self,
        definition: AgentDefinition,
        model: Model,
        adapters: list[OpenAIChatModel],
        observer: DeltaRecorder | None,
    ) -> None:
        super().__init__(definition, model)
        self.adapters = adapters
        self.observer = observer

    async def send(
        self, text: str, *, metadata: Mapping[str, JsonValue] | None = None
    ) -> TurnResult:
        """One turn; with an observer the engine streams the model's replies."""
        result = await self.engine.handle(
            self.conversation_id, text, metadata=metadata, observer=self.observer
        )
        await self.refresh()
        return result

    async def aclose(self) -> None:
        """Close the adapters' HTTP clients (the runner calls this after each test)."""
        for adapter in self.adapters:
            await adapter.aclose()


_DEFINITIONS: dict[Path, AgentDefinition] = {}


def _definition(agent_path: Path) -> AgentDefinition:
    key = Path(agent_path).resolve()
    if key not in _DEFINITIONS:
        _DEFINITIONS[key] = load_definition(key)
    return _DEFINITIONS[key]


WireFactory = Callable[[Path, ScriptedModel], WireHarness]


def single_model_factory(
    server: OpenAIWireServer, *, model: str, stream: bool, observers: list[DeltaRecorder]
) -> WireFactory:
    """Every call goes to one `OpenAIChatModel(model=model)` at the server."""

    def make(agent_path: Path, script: ScriptedModel) -> WireHarness:
        server.use(script)
        adapter = OpenAIChatModel(model=model, base_url=server.base_url, timeout=TIMEOUT)
        observer = _observer(stream, observers)
        return WireHarness(_definition(agent_path), adapter, [adapter], observer)

    return make


def tiered_factory(
    server: OpenAIWireServer, *, stream: bool, observers: list[DeltaRecorder]
) -> WireFactory:
    """A `TieredModel` whose groups are `OpenAIChatModel`s of their primary model ids."""

    def make(agent_path: Path, script: ScriptedModel) -> WireHarness:
        server.use(script)
        adapters: list[OpenAIChatModel] = []

        def build(group: ModelGroup) -> Model:
            model_id = group.models[0].model
            adapter = OpenAIChatModel(model=model_id, base_url=server.base_url, timeout=TIMEOUT)
            adapters.append(adapter)
            return adapter

        definition = _definition(agent_path)
        tiered = TieredModel(definition.integrations, build=build)
        return WireHarness(definition, tiered, adapters, _observer(stream, observers))

    return make


def _observer(stream: bool, observers: list[DeltaRecorder]) -> DeltaRecorder | None:
    if not stream:
        return None
    observer = DeltaRecorder()
    observers.append(observer)
    return observer
