"""Recorded-model replay: real recorded conversations re-run through the airline agent.

    python examples/airline/replay.py [FILE] [--verbose]

FILE (default `../shared/data/tau-bench/airline/transcripts.jsonl`) holds one recorded
conversation per line: `{"task_id", "trial", "messages", "final_db_hash"}`, the messages
in OpenAI chat format. For each line the database is reset, and the conversation runs
through Keel's real engine (an in-memory event store, the project as loaded): every user
message is one user turn, and the model's side is `ReplayModel`, which answers with the
recorded assistant messages in order, so every recorded tool call goes through Keel's full
dispatch path (offer, argument validation, the tool, the tool message fed back). Then the
database hash must equal the line's `final_db_hash`.

Alignment rules (what keeps the recording and the engine in step):

* Only user messages that the recording answers are sent. The last user message (the
  simulated user's `###STOP###`, or the message at which the recorder's step limit cut the
  run) has no recorded reply, so it is not sent: sending it would ask for a reply that
  does not exist.
* A recording may end right after tool results (the run stopped at a transfer to a human
  or at the step limit). The engine then asks for one more reply; the replay checks those
  last tool results against the recording and answers with nothing, which ends the turn
  without a message (Keel retries an empty reply once, so that costs two round trips).
* Each user turn must use exactly the replies recorded for it, end normally (`end_turn`),
  and have no tool call refused; anything else fails the transcript.

Tool outputs that differ from the recorded ones are listed per transcript (strict
`ReplayModel`). They do not fail a transcript: the recordings were made against an older
user file whose addresses had `province` where `db.json` has `state`, so every
`get_user_details` output differs in that key; such differences are counted as
`province->state` and any other difference is printed in full.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
"""The airline project."""

DEFAULT_FILE = ROOT.parents[2] / "shared" / "data" / "tau-bench" / "airline" / "transcripts.jsonl"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import airlinedb  # noqa: E402  (needs the project root on sys.path)

from keel.events.model import ToolCallRefused  # noqa: E402
from keel.ids import FakeClock  # noqa: E402
from keel.llm.port import ModelRequest, ModelResponse  # noqa: E402
from keel.llm.replay import (  # noqa: E402
    Divergence,
    InvalidTranscript,
    ReplayModel,
    compare,
    fed_tool_results,
)
from keel.llm.replay_transcript import RecordedToolResult  # noqa: E402
from keel.project.definition import AgentDefinition  # noqa: E402
from keel.testing.harness import ConversationHarness, load_definition  # noqa: E402

DRIFT = "province->state"

RECORDED_NOW = datetime(2024, 5, 15, 20, 0, tzinfo=UTC)
"""The recordings' "now", 2024-05-15 15:00 EST, as the engine's clock during a replay."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Plan:
    """How a recording is fed to the engine."""

    turns: tuple[tuple[str, int], ...]
    """(user message, number of recorded assistant replies to it), for each sent message."""
    trailing: tuple[RecordedToolResult, ...]
    """Tool results recorded after the last assistant reply (the run stopped there)."""


def plan_of(messages: Sequence[Mapping[str, Any]]) -> Plan:
    """The user turns to send and the tool results left after the last reply."""
    replies = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    last = replies[-1] if replies else -1
    turns: list[list[Any]] = []
    for index, message in enumerate(messages[: last + 1]):
        if message.get("role") == "user":
            turns.append([str(message.get("content") or ""), 0])
        elif message.get("role") == "assistant":
            if not turns:
                raise InvalidTranscript(f"message {index}: a reply before any user message")
            turns[-1][1] += 1
    trailing = tuple(
        RecordedToolResult(tool_call_id=str(m.get("tool_call_id")), content=str(m.get("content")))
        for m in messages[last + 1 :]
        if m.get("role") == "tool"
    )
    return Plan(turns=tuple((text, count) for text, count in turns), trailing=trailing)


class RecordedModel:
    """`ReplayModel` while it has replies; once they are used up after a recording that
    ended with tool results, checks those results and then answers with nothing."""

    def __init__(self, replay: ReplayModel, trailing: tuple[RecordedToolResult, ...]) -> None:
        self.replay = replay
        self.trailing = trailing
        self.late: list[Divergence] = []
        self._checked = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.replay.remaining or not self.trailing:
            return await self.replay.complete(request)
        if not self._checked:
            self._checked = True
            fed = fed_tool_results(request.messages)
            number = len(self.replay.requests)
            self.late.extend(compare(number, self.trailing, fed))
        return ModelResponse(text=None, stop_reason="end_turn", model="replay")

    @property
    def divergences(self) -> tuple[Divergence, ...]:
        """Every tool-output difference found, in order."""
        return (*self.replay.divergences, *self.late)


@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptOutcome:
    """How one recorded conversation replayed."""

    name: str
    """`task <id> trial <n> (line <k>)`."""
    expected_hash: str
    actual_hash: str
    problems: tuple[str, ...]
    """Misalignments: a turn that used other replies than recorded, ended otherwise than
    `end_turn`, refused a call; replies left over or missing."""
    divergences: tuple[Divergence, ...]

    @property
    def passed(self) -> bool:
        return self.expected_hash == self.actual_hash and not self.problems

    @property
    def drift(self) -> int:
        """Differences that are only the recorded `province` key being `state` now."""
        return sum(1 for d in self.divergences if is_drift(d))

    @property
    def other_divergences(self) -> tuple[Divergence, ...]:
        return tuple(d for d in self.divergences if not is_drift(d))


@dataclass(frozen=True, kw_only=True, slots=True)
class ReplayReport:
    """Every line of one transcripts file, in order."""

    outcomes: tuple[TranscriptOutcome, ...]

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome.passed)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed


def is_drift(divergence: Divergence) -> bool:
    """The known difference: a recorded address with `province` where `db.json` has `state`."""
    expected, actual = divergence.expected, divergence.actual
    return (
        divergence.kind == "content"
        and expected is not None
        and actual is not None
        and '"province"' in expected
        and expected.replace('"province"', '"state"') == actual
    )


async def _send_turns(harness: ConversationHarness, replay: ReplayModel, plan: Plan) -> list[str]:
    problems: list[str] = []
    for number, (text, recorded) in enumerate(plan.turns):
        before = len(replay.remaining)
        result = await harness.send(text)
        used = before - len(replay.remaining)
        where = f"user turn {number}"
        if used != recorded:
            problems.append(f"{where}: used {used} recorded replies, {recorded} recorded")
        if result.stop_reason != "end_turn":
            problems.append(f"{where}: ended with {result.stop_reason}")
        problems.extend(
            f"{where}: {event.tool_name} refused ({event.code}: {event.message})"
            for event in result.events
            if isinstance(event, ToolCallRefused)
        )
    return problems


async def replay_record(
    definition: AgentDefinition, record: Mapping[str, Any], name: str
) -> TranscriptOutcome:
    """Reset the database and run one recorded conversation through the agent."""
    airlinedb.reset()
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise InvalidTranscript(f"{name}: no `messages` list")
    plan = plan_of(messages)
    replay = ReplayModel.from_messages(messages, strict=True, source=name)
    model = RecordedModel(replay, plan.trailing)
    harness = ConversationHarness(
        definition, model, clock=FakeClock(RECORDED_NOW), conversation_id=f"replay-{name}"
    )
    problems = await _send_turns(harness, replay, plan)
    if replay.exhaustion is not None:
        problems.append(str(replay.exhaustion))
    elif replay.remaining:
        problems.append(f"{len(replay.remaining)} recorded replies were never asked for")
    return TranscriptOutcome(
        name=name,
        expected_hash=str(record.get("final_db_hash")),
        actual_hash=airlinedb.db_hash(),
        problems=tuple(problems),
        divergences=model.divergences,
    )


async def replay_file(path: Path, definition: AgentDefinition | None = None) -> ReplayReport:
    """Replay every line of `path` (raises `OSError`, `InvalidTranscript`)."""
    definition = definition or load_definition(ROOT)
    outcomes: list[TranscriptOutcome] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InvalidTranscript(f"{path}:{number}: not JSON ({exc})") from None
        name = f"task {record.get('task_id')} trial {record.get('trial')} (line {number})"
        outcomes.append(await replay_record(definition, record, name))
    return ReplayReport(outcomes=tuple(outcomes))


def check(path: Path = DEFAULT_FILE) -> ReplayReport:
    """Replay a transcripts file against this project (not from a running event loop)."""
    return asyncio.run(replay_file(path))


def report_lines(report: ReplayReport, *, verbose: bool = False) -> list[str]:
    """What the command prints: failures, tool-output differences, the totals."""
    lines: list[str] = []
    for outcome in report.outcomes:
        if not outcome.passed:
            lines.append(f"FAIL {outcome.name}: " + "; ".join(_reasons(outcome)))
        if outcome.divergences:
            others = outcome.other_divergences
            lines.append(
                f"{outcome.name}: {len(outcome.divergences)} tool-output difference(s): "
                f"{outcome.drift} {DRIFT}, {len(others)} other"
            )
            shown = outcome.divergences if verbose else others
            lines.extend(f"    {d.describe()}" for d in shown)
    lines.append(f"{report.passed} passed, {report.failed} failed")
    return lines


def _reasons(outcome: TranscriptOutcome) -> list[str]:
    reasons = list(outcome.problems)
    if outcome.actual_hash != outcome.expected_hash:
        reasons.insert(
            0, f"final db hash {outcome.actual_hash} != expected {outcome.expected_hash}"
        )
    return reasons


def run(argv: Sequence[str] | None = None) -> int:
    """The command line; 0 only when every transcript passed."""
    parser = argparse.ArgumentParser(description="Replay recorded conversations.")
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE), help="transcripts JSONL")
    parser.add_argument("--verbose", action="store_true", help="list every difference")
    args = parser.parse_args(argv)
    try:
        report = check(Path(args.file))
    except (OSError, InvalidTranscript) as exc:
        print(f"cannot replay {args.file}: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(report, verbose=args.verbose)))
    return 0 if report.failed == 0 and report.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
