"""Serve one recorded conversation to the airline agent over the OpenAI wire and keep
what Keel sent on each model call.

The recorded assistant replies are answered, in order, by `examples/airline/replay.py`'s
`RecordedModel` (a strict `ReplayModel`, plus the answer-with-nothing after a recording
that ends with tool results) behind `keel.testing.OpenAIWireServer`; the engine talks to
it through the real `OpenAIChatModel` adapter, so the bodies recorded here are what a
provider would receive. Every recorded user message that has a recorded reply is one user
turn (the replay's alignment rules); the engine's injected clock starts at the
recordings' "now" and moves `minutes_per_turn` minutes before each user turn after the
first, as the clock of a served conversation moves while the customer types.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AIRLINE = ROOT / "examples" / "airline"
for _path in (ROOT, AIRLINE):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import airlinedb  # noqa: E402  (examples/airline on sys.path)
import replay as airline_replay  # noqa: E402  (examples/airline/replay.py)

from keel.events.model import ToolCallRefused  # noqa: E402
from keel.ids import FakeClock  # noqa: E402
from keel.llm.openai import OpenAIChatModel  # noqa: E402
from keel.llm.replay import ReplayModel  # noqa: E402
from keel.project.definition import AgentDefinition  # noqa: E402
from keel.testing.harness import ConversationHarness  # noqa: E402
from keel.testing.openai_wire_server import OpenAIWireServer  # noqa: E402

DEFAULT_FILE: Path = airline_replay.DEFAULT_FILE
"""`../shared/data/tau-bench/airline/transcripts.jsonl`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Served:
    """One recorded conversation as served to Keel."""

    name: str
    contexts: tuple[tuple[Mapping[str, Any], ...], ...]
    """For each recorded reply, the messages gpt-4o had been sent before it."""
    bodies: tuple[Mapping[str, Any], ...]
    """Keel's request bodies at the same points as `contexts[:len(bodies)]`: one per
    recorded reply, up to where the run left the recording's steps (`in_step_calls`)."""
    extra_requests: int
    """Requests after the recorded replies ran out (the end after trailing tool results)."""
    problems: tuple[str, ...]
    """Ways the served run left the recording's steps (empty: in step)."""

    @property
    def left_out(self) -> int:
        """Recorded replies whose request is not compared (after the run left the steps)."""
        return len(self.contexts) - len(self.bodies)


def in_step_calls(recorded: Sequence[int], used: Sequence[int]) -> int:
    """How many of Keel's requests sit at the same point as the recorded reply of the same
    number: every call of the user turns that used the recorded number of replies, up to
    the first turn that did not, and that turn's first calls (the replies it shares with
    the recording). After that turn the replies answer other turns than recorded."""
    count = 0
    for want, got in zip(recorded, used, strict=False):
        if want != got:
            return count + min(want, got)
        count += want
    return count


def recorded_contexts(messages: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], ...]]:
    """gpt-4o's context for each of its replies: every message before it."""
    return [tuple(messages[:i]) for i, m in enumerate(messages) if m.get("role") == "assistant"]


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
    model = airline_replay.RecordedModel(replay, plan.trailing)
    server.use(model)  # type: ignore[arg-type]  # any object with `complete` will do
    start = len(server.requests)
    adapter = OpenAIChatModel(model="gpt-4o", base_url=server.base_url, timeout=30)
    clock = FakeClock(airline_replay.RECORDED_NOW)
    harness = ConversationHarness(definition, adapter, clock=clock, conversation_id=name)
    problems: list[str] = []
    used_per_turn: list[int] = []
    try:
        for number, (text, recorded) in enumerate(plan.turns):
            if number:
                clock.advance(minutes_per_turn * 60)
            before = len(replay.remaining)
            result = await harness.send(text)
            used = before - len(replay.remaining)
            used_per_turn.append(used)
            if used != recorded:
                problems.append(f"user turn {number}: used {used} replies, {recorded} recorded")
            if result.stop_reason != "end_turn":
                problems.append(f"user turn {number}: ended with {result.stop_reason}")
            problems.extend(
                f"user turn {number}: {e.tool_name} refused ({e.code})"
                for e in result.events
                if isinstance(e, ToolCallRefused)
            )
    finally:
        await harness.aclose()
        await adapter.aclose()
    if replay.exhaustion is not None:
        problems.append(str(replay.exhaustion))
    contexts = recorded_contexts(messages)
    sent = [request.body for request in server.requests[start:]]
    aligned = in_step_calls([count for _text, count in plan.turns], used_per_turn)
    return Served(
        name=name,
        contexts=tuple(contexts),
        bodies=tuple(sent[: min(aligned, len(contexts))]),
        extra_requests=max(len(sent) - len(contexts), 0),
        problems=tuple(problems),
    )


def recorded_tools(transcripts: Path) -> list[Any]:
    """The tool schemas gpt-4o was sent: `tools.json` beside the transcripts file (the
    reference `ALL_TOOLS` order)."""
    tools = json.loads((transcripts.parent / "tools.json").read_text(encoding="utf-8"))
    return tools if isinstance(tools, list) else []
