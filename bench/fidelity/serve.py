"""Serve one recorded conversation to the airline agent over the OpenAI wire and keep
what Keel sent on each model call.

The model side is `examples/airline/replay.py`'s `RecordedModel` (a strict `ReplayModel`,
the empty answer after a recording that ends with tool results, and the passing on of a
confirmation answer) behind `keel.testing.OpenAIWireServer`; the engine talks to it
through the real `OpenAIChatModel` adapter, so the bodies kept here are what a provider
would receive. The user turns are sent by the replay's own `_send_turns` (one turn per
recorded user message that has a recorded reply; a write the agent holds is answered for
the customer, from what they said, as the replay does), through a harness whose injected
clock starts at the recordings' "now" and moves `minutes_per_turn` minutes before every
message after the first (a confirmation answer too), as the clock of a served
conversation moves while the customer types.

A request of Keel's is compared with gpt-4o's context before reply *j* when it is the
request that reply *j* answered and it was made in the user turn the reply was recorded
in; requests answered otherwise (a confirmation passed on, the empty answer at the end)
are served and kept for the prefix share, but have no recorded counterpart.
"""

from __future__ import annotations

import inspect
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AIRLINE = ROOT / "examples" / "airline"
for _path in (ROOT, AIRLINE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import airlinedb  # noqa: E402  (examples/airline on sys.path)
import replay as airline_replay  # noqa: E402  (examples/airline/replay.py)

from keel.ids import FakeClock  # noqa: E402
from keel.llm.openai import OpenAIChatModel  # noqa: E402
from keel.llm.port import ModelRequest, ModelResponse  # noqa: E402
from keel.llm.replay import ReplayModel  # noqa: E402
from keel.loop.result import TurnResult  # noqa: E402
from keel.project.definition import AgentDefinition  # noqa: E402
from keel.testing.harness import ConversationHarness  # noqa: E402
from keel.testing.openai_wire_server import OpenAIWireServer  # noqa: E402

DEFAULT_FILE: Path = airline_replay.DEFAULT_FILE
"""`../shared/data/tau-bench/airline/transcripts.jsonl`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class KeelRequest:
    """One request Keel sent, as it crossed the wire."""

    body: Mapping[str, Any]
    message: int
    """0-based number of the customer message it followed (confirmation answers count)."""
    turn: int
    """0-based recorded user turn it was made in."""
    reply: int | None
    """The recorded reply that answered it, if one did."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Served:
    """One recorded conversation as served to Keel."""

    name: str
    contexts: tuple[tuple[Mapping[str, Any], ...], ...]
    """For each recorded reply, the messages gpt-4o had been sent before it."""
    requests: tuple[KeelRequest, ...]
    """Every request Keel sent, in order."""
    pairs: tuple[tuple[int, Mapping[str, Any]], ...]
    """(recorded reply, Keel's body) for the requests at the same point as a recorded one."""
    problems: tuple[str, ...]
    """Ways the served run left the recording's steps, as the replay reports them."""

    @property
    def left_out(self) -> int:
        """Recorded replies with no request of Keel's at the same point."""
        return len(self.contexts) - len(self.pairs)


@dataclass(kw_only=True, slots=True)
class _Tap:
    """The model behind the server: the replay's `RecordedModel`, noting for each request
    the message and turn it came in and the recorded reply that answered it."""

    model: Any
    replay: ReplayModel
    server: OpenAIWireServer
    clock: FakeClock
    minutes: float
    requests: list[KeelRequest] = field(default_factory=list)
    message: int = -1
    turn: int = -1
    _answering: bool = False
    _replies: int = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        before = len(self.replay.remaining)
        body = self.server.requests[-1].body  # the server records a body before asking
        response: ModelResponse = await self.model.complete(request)
        reply = None
        if len(self.replay.remaining) < before:  # a recorded reply answered this request
            reply, self._replies = self._replies, self._replies + 1
        self.requests.append(
            KeelRequest(body=body, message=self.message, turn=self.turn, reply=reply)
        )
        return response

    def answer(self, approved: bool) -> None:
        """The replay answers a held write for the customer: the next send is that answer."""
        self._answering = True
        self.model.answer(approved)

    async def send(self, harness: ConversationHarness, text: str) -> TurnResult:
        if self.message >= 0:
            self.clock.advance(self.minutes * 60)
        self.message += 1
        if not self._answering:
            self.turn += 1
        self._answering = False
        return await harness.send(text)


class _ClockedHarness:
    """The harness `_send_turns` drives: each `send` goes through the tap (clock, counts)."""

    def __init__(self, harness: ConversationHarness, tap: _Tap) -> None:
        self._harness = harness
        self._tap = tap

    async def send(self, text: str) -> TurnResult:
        return await self._tap.send(self._harness, text)


async def _send_turns(
    harness: _ClockedHarness, replay: ReplayModel, tap: _Tap, plan: Any
) -> list[str]:
    """The replay's own turn sender: with the confirmation answers (`model` given) since
    the airline agent holds writes, without them in older trees (the problems listed)."""
    send: Any = airline_replay._send_turns  # two signatures; duck-typed harness and model
    if "model" not in inspect.signature(send).parameters:  # before the airline policy
        return list(await send(harness, replay, plan))
    run = await send(harness, replay, tap, plan, approve_all=False)
    return list(run.problems)


def recorded_contexts(messages: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], ...]]:
    """gpt-4o's context for each of its replies: every message before it."""
    return [tuple(messages[:i]) for i, m in enumerate(messages) if m.get("role") == "assistant"]


def recorded_turns(plan_turns: Sequence[tuple[str, int]]) -> list[int]:
    """The user turn of each recorded reply, from the plan's replies per turn."""
    return list(
        itertools.chain.from_iterable([turn] * count for turn, (_t, count) in enumerate(plan_turns))
    )


def read_records(path: Path, limit: int | None = None) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, record) for each line of a transcripts file, the first `limit` only if given."""
    records: list[tuple[str, Mapping[str, Any]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        records.append((f"task {record.get('task_id')} trial {record.get('trial')}", record))
        if limit is not None and len(records) >= limit:
            break
    return records


async def serve_record(
    server: OpenAIWireServer,
    definition: AgentDefinition,
    name: str,
    record: Mapping[str, Any],
    *,
    minutes_per_turn: float,
) -> Served:
    """Run one recorded conversation through the agent, the model behind `server`."""
    airlinedb.reset()
    messages = list(record.get("messages") or [])
    plan = airline_replay.plan_of(messages)
    replay = ReplayModel.from_messages(messages, strict=True, source=name)
    clock = FakeClock(airline_replay.RECORDED_NOW)
    tap = _Tap(
        model=airline_replay.RecordedModel(replay, plan.trailing),
        replay=replay,
        server=server,
        clock=clock,
        minutes=minutes_per_turn,
    )
    server.use(tap)  # type: ignore[arg-type]  # any object with `complete` will do
    adapter = OpenAIChatModel(model="gpt-4o", base_url=server.base_url, timeout=30)
    harness = ConversationHarness(definition, adapter, clock=clock, conversation_id=name)
    try:
        problems = await _send_turns(_ClockedHarness(harness, tap), replay, tap, plan)
    finally:
        await harness.aclose()
        await adapter.aclose()
    if replay.exhaustion is not None:
        problems.append(str(replay.exhaustion))
    contexts = recorded_contexts(messages)
    turns = recorded_turns(plan.turns)
    pairs = tuple(
        (request.reply, request.body)
        for request in tap.requests
        if request.reply is not None
        and request.reply < len(turns)
        and turns[request.reply] == request.turn
    )
    return Served(
        name=name,
        contexts=tuple(contexts),
        requests=tuple(tap.requests),
        pairs=pairs,
        problems=tuple(problems),
    )


def recorded_tools(transcripts: Path) -> list[Any]:
    """The tool schemas gpt-4o was sent: `tools.json` beside the transcripts file (the
    reference `ALL_TOOLS` order)."""
    tools = json.loads((transcripts.parent / "tools.json").read_text(encoding="utf-8"))
    return tools if isinstance(tools, list) else []
