"""Keel: the agent in `keel_agent/` run through the real engine with `ScriptedModel`.

The project has one prose skill, `orders`, with one tool, `lookup`; its session start links
to that skill, so the user's message goes straight to the tool-calling loop (no routing
call). Each run is one user message in a conversation whose session has already started
(`prepare` starts it, untimed): the steady state of a conversation, where every message
reads the conversation's log, folds it, runs the loop and appends what happened.

The store is `InMemoryEventStore` (the event log kept in the process, every event encoded
to JSON on append and decoded on read, as a database would), since the peers keep nothing
by default. `make(scenario, store="sqlite")` uses a SQLite file instead (one file for all
runs, a new conversation per run). Clock and ids are the engine's defaults (system clock,
uuid4), as in production.

`make(scenario, telemetry=True)` runs Keel with tracing and metrics on, as `keel run` does
with `OTEL_EXPORTER_OTLP_ENDPOINT` set: each run inside a server span (the request's), a
`TurnTap` as the engine's observer, its spans encoded as OTLP protobuf from its events
and exported in batches by Keel's exporting thread over OTLP/HTTP to a receiver in
another process (otlp_sink.py), its events counted in the metrics. The spans the
receiver decoded are counted at `close`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from scenarios import ANSWER, TOOL_NAME, USER_TEXT, Outcome, Scenario

from keel.events.model import ToolExecuted
from keel.loop.engine import Engine
from keel.loop.result import TurnResult
from keel.stores.memory import InMemoryEventStore
from keel.stores.port import EventStore
from keel.testing.harness import load_definition
from keel.testing.scripted import ReplySource, ScriptedModel

AGENT = Path(__file__).resolve().parent / "keel_agent"


def replies(scenario: Scenario) -> list[ReplySource]:
    """The scenario as a `ScriptedModel` script."""
    script: list[ReplySource] = []
    for index, order_id in enumerate(scenario.order_ids):
        call = {
            "id": scenario.call_id(index),
            "name": TOOL_NAME,
            "arguments": {"order_id": order_id},
        }
        script.append({"text": None, "tool_calls": [call]})
    script.append(ANSWER)
    return script


def outcome(result: TurnResult) -> Outcome:
    """What a turn produced, in the benchmark's terms."""
    answer = " ".join(m.text for m in result.bot_messages)
    runs = sum(1 for e in result.events if isinstance(e, ToolExecuted) and e.tool_name == TOOL_NAME)
    return Outcome(answer=answer, tool_results=runs)


class KeelCase:
    """Keel running one scenario."""

    def __init__(
        self, scenario: Scenario, store: str = "memory", telemetry: bool | str = False
    ) -> None:
        self.scenario = scenario
        self.store_kind = store
        self.telemetry: Any = None
        self._sink: subprocess.Popen[str] | None = None
        self.received: dict[str, int] = {}
        self.definition = load_definition(AGENT)
        self.script = replies(scenario)
        self.conversations = 0
        self.engine: Engine | None = None
        self._store: EventStore | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if telemetry:
            self._open_telemetry(traced=telemetry != "metrics")

    def _open_telemetry(self, *, traced: bool) -> None:
        from opentelemetry import context as otel_context

        from keel.ids import SystemClock
        from keel.observe.providers import provider_lookup
        from keel.observe.tap import Telemetry
        from keel.observe.tracing import ServerSpan, TracingConfig

        self._otel = (otel_context, ServerSpan)  # imported once, not per run

        tracing = None
        if traced:
            sink = Path(__file__).resolve().parent / "otlp_sink.py"
            self._sink = subprocess.Popen(
                [sys.executable, str(sink)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._sink.stdout is not None
            base = self._sink.stdout.readline().strip()
            # The standard variables, as `keel run` reads them (sampler, batch processor).
            env = {**os.environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{base}/v1/traces"}
            tracing = TracingConfig.from_env({"OTEL_SERVICE_NAME": "keel-bench", **env})
        self.telemetry = Telemetry(clock=SystemClock(), tracing=tracing)
        agent = self.definition.config.id or "keel_agent"
        self.telemetry.open(agent=agent, provider_of=provider_lookup(self.definition))

    async def _open_store(self) -> EventStore:
        if self.store_kind == "memory":
            # A fresh store per run: the log of earlier runs is not kept around.
            return InMemoryEventStore()
        if self._store is None:
            from keel.stores.sqlite import SqliteEventStore

            self._tmp = tempfile.TemporaryDirectory(prefix="keel-bench-peers-")
            self._store = await SqliteEventStore.open(Path(self._tmp.name) / "bench.db")
        return self._store

    async def prepare(self) -> None:
        self.conversations += 1
        self.engine = Engine(
            definition=self.definition,
            store=await self._open_store(),
            model=ScriptedModel(self.script),
        )
        await self.engine.handle(self._conversation, "/session_start")

    @property
    def _conversation(self) -> str:
        return f"bench-{self.conversations}"

    async def run(self) -> TurnResult:
        assert self.engine is not None, "prepare() first"
        if self.telemetry is None:
            return await self.engine.handle(self._conversation, USER_TEXT)
        if self.telemetry.tracing is None:  # metrics only
            tap = self.telemetry.tap(self._conversation)
            result = await self.engine.handle(self._conversation, USER_TEXT, observer=tap)
            tap.finish()
            return result
        return await self._run_traced()

    async def _run_traced(self) -> TurnResult:
        otel_context, ServerSpan = self._otel
        assert self.engine is not None and self.telemetry is not None
        seconds = self.telemetry.seconds
        route = "POST /v1/conversations/{conversation_id}/messages"
        # What the server's request middleware does (keel.server.telemetry.TraceRequests).
        span = ServerSpan(
            self.telemetry.tracing,
            route,
            otel_context.get_current(),
            start_ns=int(seconds() * 1e9),
            attributes={"http.request.method": "POST", "url.path": "/v1/conversations/x"},
        )
        token = otel_context.attach(span.context)
        try:
            tap = self.telemetry.tap(self._conversation)
            result = await self.engine.handle(self._conversation, USER_TEXT, observer=tap)
            tap.finish()
        finally:
            otel_context.detach(token)
            span.attributes["http.response.status_code"] = 200
            span.end(int(seconds() * 1e9))
        return result

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, TurnResult)
        return outcome(result)

    async def close(self) -> None:
        if self.telemetry is not None:
            self.telemetry.close()  # exports what is left
        if self._sink is not None:
            out, _ = self._sink.communicate("")
            self.received = json.loads(out.strip().splitlines()[-1])
            print(f"keel, telemetry on: the receiver decoded {self.received}", file=sys.stderr)
        if self._store is not None:
            await self._store.close()
        if self._tmp is not None:
            self._tmp.cleanup()


def make(scenario: Scenario, store: str = "memory", telemetry: bool | str = False) -> KeelCase:
    """Keel, ready to run `scenario` over `store` (`memory` or `sqlite`), with tracing and
    metrics on when `telemetry` (`"metrics"`: metrics only)."""
    return KeelCase(scenario, store, telemetry)
