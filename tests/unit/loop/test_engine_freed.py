"""A dropped engine is freed at once, by reference counting: nothing it holds (the logs it
cached, its router) waits for the garbage collector, which a process that makes an engine
per tenant, per reload or per test would otherwise pay for in collections."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from keel.embeddings import factory
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.stores.memory import InMemoryEventStore
from keel.testing import ScriptedModel
from keel.testing.harness import load_definition

GREETER = Path(__file__).resolve().parents[2] / "conversations" / "agents" / "greeter"


async def test_a_dropped_engine_is_freed_without_a_collection() -> None:
    engine = Engine(
        definition=load_definition(GREETER), store=InMemoryEventStore(), model=ScriptedModel([])
    )
    await engine.handle("c", "/session_start")
    freed = weakref.ref(engine)
    router = weakref.ref(engine.router)
    gc.disable()
    try:
        del engine
        assert freed() is None, "the engine is in a reference cycle"
        assert router() is None
    finally:
        gc.enable()


def test_the_router_reads_the_engines_current_definition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Engine(
        definition=load_definition(GREETER), store=InMemoryEventStore(), model=ScriptedModel([])
    )
    reloaded = load_definition(GREETER)
    engine.definition = reloaded  # a reload swaps it; the router follows the engine
    seen: list[AgentDefinition] = []
    monkeypatch.setattr(factory, "embedder_for", seen.append)
    engine.router._factory()  # what the router's first use runs
    assert seen == [reloaded]
