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
"""

from __future__ import annotations

import tempfile
from pathlib import Path

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

    def __init__(self, scenario: Scenario, store: str = "memory") -> None:
        self.scenario = scenario
        self.store_kind = store
        self.definition = load_definition(AGENT)
        self.script = replies(scenario)
        self.conversations = 0
        self.engine: Engine | None = None
        self._store: EventStore | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

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
        return await self.engine.handle(self._conversation, USER_TEXT)

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, TurnResult)
        return outcome(result)

    async def close(self) -> None:
        if self._store is not None:
            await self._store.close()
        if self._tmp is not None:
            self._tmp.cleanup()


def make(scenario: Scenario, store: str = "memory") -> KeelCase:
    """Keel, ready to run `scenario` over `store` (`memory` or `sqlite`)."""
    return KeelCase(scenario, store)
