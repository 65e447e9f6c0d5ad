"""Helpers for the server tests: the example agent served in process.

`serve(replies)` builds an app on the example agent with a `ScriptedModel`, a temporary
SQLite store, a fake clock and sequential ids, enters its lifespan and yields a `Served`
with an httpx client talking to it over `ASGITransport` (no sockets).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import FastAPI

from keel.ids import FakeClock, SequentialIds
from keel.llm.port import (
    Model,
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
)
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.server import ServerSettings, create_app
from keel.server.auth import KeyRing, parse_keys
from keel.server.ratelimit import RateLimit
from keel.server.runtime import ServerRuntime
from keel.stores.port import EventStore
from keel.testing.scripted import ReplySource, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support"
SALT = b"test-salt"
KEY_SPECS = """
alice:chat:alice-secret
bob:chat:bob-secret
root:admin:root-secret
"""
ALICE = {"Authorization": "Bearer alice-secret"}
BOB = {"x-api-key": "bob-secret"}
ROOT_KEY = {"Authorization": "Bearer root-secret"}

ACTIVATE_OUTAGE = {
    "tool_calls": [{"name": "activate", "arguments": {"target_id": "report_outage"}}]
}
SET_POSTCODE = {
    "tool_calls": [{"name": "set_fields", "arguments": {"fields": {"postcode": "LN4 7QP"}}}]
}


@dataclass(kw_only=True)
class Served:
    """An app being served in process."""

    app: FastAPI
    client: httpx.AsyncClient
    model: Model
    clock: FakeClock
    runtime: ServerRuntime
    store: EventStore


class GatedModel:
    """A scripted model that holds each reply until the test opens the gate.

    Special because the server tests need a turn that is still running while they send
    a second request, cancel it, or disconnect: `called` is set when a request arrives,
    `gate` lets the reply through (it stays open once set).
    """

    def __init__(self, replies: Iterable[ReplySource] = ()) -> None:
        self.inner = ScriptedModel(replies)
        self.called = asyncio.Event()
        self.gate = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Wait for the gate, then answer like `ScriptedModel`."""
        self.called.set()
        await self.gate.wait()
        return await self.inner.complete(request)


class StreamingModel(ScriptedModel):
    """A scripted model that also streams: each reply's text arrives in three pieces.

    Special because `ScriptedModel` only answers whole replies, and the `text_delta` frames
    need a model with `stream`.
    """

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield the reply's text in pieces, then the whole reply."""
        response = await self.complete(request)
        text = response.text or ""
        third = max(1, len(text) // 3)
        for start in range(0, len(text), third):
            yield TextDelta(text=text[start : start + third])
        yield StreamDone(response=response)


def parse_sse(text: str) -> list[tuple[int | None, str, dict[str, object]]]:
    """(id, event, data) of every frame of a text/event-stream body."""
    import json

    frames: list[tuple[int | None, str, dict[str, object]]] = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        if "event" in fields:
            ident = int(fields["id"]) if "id" in fields else None
            frames.append((ident, fields["event"], json.loads(fields["data"])))
    return frames


def keyring() -> KeyRing:
    """The test keys (alice, bob: chat; root: admin)."""
    return KeyRing(salt=SALT, keys=parse_keys(KEY_SPECS, SALT))


@asynccontextmanager
async def serving(
    tmp_path: Path,
    model: Model,
    *,
    rate_limit: RateLimit | None = None,
    max_body_bytes: int = 64 * 1024,
    engine_type: type[Engine] = Engine,
    project: Path = EXAMPLE,
    database_url: str | None = None,
) -> AsyncIterator[Served]:
    """Serve the example agent (or `project`) with `model` until the block ends, on
    `database_url` (default: a SQLite file in `tmp_path`)."""
    clock = FakeClock()
    settings = ServerSettings(
        project=project,
        database_url=database_url or f"sqlite:///{tmp_path / 'keel.db'}",
        keys=keyring(),
        rate_limit=rate_limit or RateLimit.parse("off"),
        max_body_bytes=max_body_bytes,
    )

    def engine(definition: AgentDefinition, store: EventStore) -> Engine:
        return engine_type(
            definition=definition, store=store, model=model, clock=clock, ids=SequentialIds("id-")
        )

    app = create_app(settings, engine_factory=engine, clock=clock, ids=SequentialIds("req-"))
    runtime: ServerRuntime = app.state.keel
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://keel.test") as client:
            yield Served(
                app=app,
                client=client,
                model=model,
                clock=clock,
                runtime=runtime,
                store=runtime.store,
            )


ServeFactory = Callable[..., AbstractAsyncContextManager[Served]]
