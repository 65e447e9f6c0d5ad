"""Helpers for the telemetry tests: an app served with tracing to a local OTLP receiver,
a model that reports usage and takes time on the fake clock, and span-tree lookups."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI
from server_kit import EXAMPLE, keyring

from keel.ids import Clock, FakeClock, SequentialIds, SystemClock
from keel.llm.port import Model, ModelRequest, ModelResponse, Usage
from keel.loop.engine import Engine
from keel.observe.tap import Telemetry
from keel.observe.tracing import TracingConfig
from keel.project.definition import AgentDefinition
from keel.server import ServerSettings, create_app
from keel.server.ratelimit import RateLimit
from keel.stores.port import EventStore
from keel.testing.otlp_receiver import ReceivedSpan
from keel.testing.scripted import ReplySource, ScriptedModel

OBSERVED = Path(__file__).resolve().parent / "agents" / "observed"


class MeteredModel:
    """A scripted model whose every call takes `seconds` on the fake clock and reports
    `usage` (special because `ScriptedModel` answers at once with no usage)."""

    def __init__(
        self, replies: Iterable[ReplySource], clock: FakeClock, seconds: float, usage: Usage
    ) -> None:
        self.inner = ScriptedModel(replies)
        self.clock = clock
        self.seconds = seconds
        self.usage = usage

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer like `ScriptedModel`, later and with usage."""
        response = await self.inner.complete(request)
        self.clock.advance(self.seconds)
        return dataclasses.replace(response, usage=self.usage)


@dataclass(kw_only=True)
class Traced:
    """An app being served in process, with its telemetry."""

    app: FastAPI
    client: httpx.AsyncClient
    telemetry: Telemetry


@asynccontextmanager
async def traced_app(
    tmp_path: Path,
    model: Model,
    *,
    tracing: TracingConfig | None,
    clock: Clock | None = None,
    project: Path = EXAMPLE,
) -> AsyncIterator[Traced]:
    """Serve `project` with `model` (engine and app on `clock`, the system clock by
    default, so each commit has its own stamp) and `tracing`."""
    used: Clock = clock or SystemClock()
    settings = ServerSettings(
        project=project,
        database_url=f"sqlite:///{tmp_path / 'keel.db'}",
        keys=keyring(),
        rate_limit=RateLimit.parse("off"),
    )

    def engine(definition: AgentDefinition, store: EventStore) -> Engine:
        return Engine(
            definition=definition, store=store, model=model, clock=used, ids=SequentialIds("id-")
        )

    app = create_app(settings, engine_factory=engine, clock=used, tracing=tracing)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://keel.test") as client:
            yield Traced(app=app, client=client, telemetry=app.state.telemetry)


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    """The spans whose parent is `parent`, in start order."""
    found = [s for s in spans if s.parent_span_id == parent.span_id]
    return sorted(found, key=lambda s: s.start_ns)


def one(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    """The only span called `name`."""
    named = [s for s in spans if s.name == name]
    assert len(named) == 1, f"{len(named)} spans named {name!r}: {[s.name for s in spans]}"
    return named[0]
