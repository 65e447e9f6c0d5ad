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
* Each user turn must use exactly the replies recorded for it (over its confirmation
  turns too, below), end normally (`end_turn`), and have no tool call refused other than by
  the policy; anything else fails the transcript.

The agent enforces the airline policy (README, "The policy and where it is enforced"):
a write call is held until the customer answers Keel's confirmation question. The recorded
customer never heard that question, so the replay answers it for them, from the recorded
message the call followed (`replay_writes.approves`: yes to an agreement or a request for
the action, no otherwise; `--approve-all` answers every question yes). The answer is sent
as a user message, and `RecordedModel` passes it on with a `resolve_tool_confirmation` call
of its own, which uses no recorded reply; the held call's result then stands in for the
result the recording shows for that call. A transcript whose writes all ran must end on
its recorded `final_db_hash`; one where the policy stopped a write ends where it ends, and
`writes` says what was stopped and why (`bench/airline_policy` reports it against the
tasks' gold hashes).

Tool outputs that differ from the recorded ones are listed per transcript (strict
`ReplayModel`). They do not fail a transcript: the recordings were made against an older
user file whose addresses had `province` where `db.json` has `state`, so every
`get_user_details` output differs in that key; such differences are counted as
`province->state` and any other difference is printed in full.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
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
TASKS_NAME = "tasks.jsonl"
"""The tasks file beside a transcripts file: each task's gold actions and gold hash."""

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import airlinedb  # noqa: E402  (needs the project root on sys.path)
from replay_writes import GATE_CODES, WRITE_TOOLS, WriteAttempt, approves, write_attempts  # noqa: E402

from keel.events.model import Event, ToolCallRefused  # noqa: E402
from keel.ids import FakeClock  # noqa: E402
from keel.llm.port import Message, ModelRequest, ModelResponse, ToolCall  # noqa: E402
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


RESOLVE = "resolve_tool_confirmation"


class RecordedModel:
    """`ReplayModel` while it has replies; once they are used up after a recording that
    ended with tool results, checks those results and then answers with nothing.

    When the replay has answered a confirmation question for the customer (`answer`), the
    next request gets a `resolve_tool_confirmation` call carrying that answer instead of a
    recorded reply; on the request after it, the result of that call is shown to the
    recording's checks under the id of the held call, whose result it is."""

    def __init__(self, replay: ReplayModel, trailing: tuple[RecordedToolResult, ...]) -> None:
        self.replay = replay
        self.trailing = trailing
        self.late: list[Divergence] = []
        self._checked = False
        self._answer: bool | None = None
        self._last_call: str | None = None
        self._renamed: dict[str, str] = {}
        self._resolves = 0

    def answer(self, approved: bool) -> None:
        """Pass `approved` on at the next request (the customer's answer, sent by the replay)."""
        self._answer = approved

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._answer is not None and any(t.name == RESOLVE for t in request.tools):
            return self._resolve()
        request = self._renamed_results(request)
        if self.replay.remaining or not self.trailing:
            response = await self.replay.complete(request)
            if response.tool_calls:
                self._last_call = response.tool_calls[-1].id
            return response
        if not self._checked:
            self._checked = True
            fed = fed_tool_results(request.messages)
            number = len(self.replay.requests)
            self.late.extend(compare(number, self.trailing, fed))
        return ModelResponse(text=None, stop_reason="end_turn", model="replay")

    def _resolve(self) -> ModelResponse:
        approved, self._answer = self._answer, None
        self._resolves += 1
        call_id = f"replay-confirmation-{self._resolves}"
        if self._last_call is not None:
            self._renamed[call_id] = self._last_call
        arguments = json.dumps({"confirmed": bool(approved)})
        call = ToolCall(id=call_id, name=RESOLVE, arguments=arguments)
        return ModelResponse(text=None, tool_calls=(call,), stop_reason="tool_use", model="replay")

    def _renamed_results(self, request: ModelRequest) -> ModelRequest:
        if not self._renamed:
            return request
        messages: list[Message] = []
        for message in request.messages:
            if message["role"] == "tool" and message["tool_call_id"] in self._renamed:
                message = {**message, "tool_call_id": self._renamed[message["tool_call_id"]]}
            messages.append(message)
        return dataclasses.replace(request, messages=tuple(messages))

    @property
    def divergences(self) -> tuple[Divergence, ...]:
        """Every tool-output difference found, in order."""
        return (*self.replay.divergences, *self.late)


@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptOutcome:
    """How one recorded conversation replayed."""

    name: str
    """`task <id> trial <n> (line <k>)`."""
    task_id: int | None = None
    reward: float | None = None
    """The recorded run's reward (1: it reached the task's gold state, and said what it had to)."""
    expected_hash: str
    """The recorded run's final database hash."""
    gold_hash: str | None = None
    """The task's gold hash (from the tasks file beside the transcripts), when known."""
    actual_hash: str
    problems: tuple[str, ...]
    """Misalignments: a turn that used other replies than recorded, ended otherwise than
    `end_turn`, had a call refused other than by the policy; replies left over or missing."""
    divergences: tuple[Divergence, ...]
    writes: tuple[WriteAttempt, ...] = ()
    """Every write the recorded model asked for, and what became of it."""
    gated_reads: int = 0
    """Reads refused because nobody was signed in."""

    @property
    def stopped(self) -> tuple[WriteAttempt, ...]:
        """The writes the policy stopped (refused, declined at the confirmation, gated)."""
        return tuple(w for w in self.writes if w.stopped)

    @property
    def intervened(self) -> bool:
        """The policy changed what ran."""
        return bool(self.stopped) or self.gated_reads > 0

    @property
    def at_gold(self) -> bool:
        """The replay ended on the task's gold hash."""
        return self.gold_hash is not None and self.actual_hash == self.gold_hash

    @property
    def passed(self) -> bool:
        """Aligned, and on the recorded hash unless the policy stopped something."""
        if self.problems:
            return False
        return self.intervened or self.expected_hash == self.actual_hash

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


@dataclass(kw_only=True, slots=True)
class _Run:
    """What the turns of one replay found."""

    problems: list[str] = dataclasses.field(default_factory=list)
    writes: list[WriteAttempt] = dataclasses.field(default_factory=list)
    gated_reads: int = 0


async def _send_turns(
    harness: ConversationHarness,
    replay: ReplayModel,
    model: RecordedModel,
    plan: Plan,
    *,
    approve_all: bool,
) -> _Run:
    run = _Run()
    for number, (text, recorded) in enumerate(plan.turns):
        before = len(replay.remaining)
        results = [await harness.send(text)]
        # A held write: answer Keel's question for the customer, from what they said.
        while results[-1].stop_reason == "paused" and len(results) <= recorded + 1:
            approved = approve_all or approves(text)
            model.answer(approved)
            results.append(await harness.send("yes" if approved else "no"))
        used = before - len(replay.remaining)
        where = f"user turn {number}"
        if used != recorded:
            run.problems.append(f"{where}: used {used} recorded replies, {recorded} recorded")
        if results[-1].stop_reason != "end_turn":
            run.problems.append(f"{where}: ended with {results[-1].stop_reason}")
        events = [event for result in results for event in result.events]
        run.writes.extend(write_attempts(events, text))
        _refusals(run, where, events)
    return run


def _refusals(run: _Run, where: str, events: Sequence[Event]) -> None:
    for event in events:
        if not isinstance(event, ToolCallRefused) or event.tool_name in WRITE_TOOLS:
            continue  # a refused write is one of the turn's write attempts
        if event.code in GATE_CODES:
            run.gated_reads += 1
        else:
            run.problems.append(
                f"{where}: {event.tool_name} refused ({event.code}: {event.message})"
            )
    for attempt in run.writes:
        if attempt.outcome == "failed" and attempt.code is not None:
            run.problems.append(f"{where}: {attempt.tool} refused ({attempt.code})")


async def replay_record(
    definition: AgentDefinition,
    record: Mapping[str, Any],
    name: str,
    *,
    gold: Mapping[int, str] | None = None,
    approve_all: bool = False,
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
    run = await _send_turns(harness, replay, model, plan, approve_all=approve_all)
    if replay.exhaustion is not None:
        run.problems.append(str(replay.exhaustion))
    elif replay.remaining:
        run.problems.append(f"{len(replay.remaining)} recorded replies were never asked for")
    task_id = record.get("task_id")
    reward = record.get("reward")
    return TranscriptOutcome(
        name=name,
        task_id=task_id if isinstance(task_id, int) else None,
        reward=float(reward) if isinstance(reward, int | float) else None,
        expected_hash=str(record.get("final_db_hash")),
        gold_hash=(gold or {}).get(task_id) if isinstance(task_id, int) else None,
        actual_hash=airlinedb.db_hash(),
        problems=tuple(run.problems),
        divergences=model.divergences,
        writes=tuple(run.writes),
        gated_reads=run.gated_reads,
    )


def gold_hashes(path: Path) -> dict[int, str]:
    """Task index -> gold hash, from a tasks file (`airline-test-<n>` ids); {} when absent."""
    if not path.is_file():
        return {}
    found: dict[int, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            task = json.loads(line)
            found[int(str(task["id"]).rsplit("-", 1)[-1])] = str(task["final_db_hash"])
    return found


async def replay_file(
    path: Path, definition: AgentDefinition | None = None, *, approve_all: bool = False
) -> ReplayReport:
    """Replay every line of `path` (raises `OSError`, `InvalidTranscript`); the gold hashes
    come from the tasks file beside it."""
    definition = definition or load_definition(ROOT)
    gold = gold_hashes(path.with_name(TASKS_NAME))
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
        outcomes.append(
            await replay_record(definition, record, name, gold=gold, approve_all=approve_all)
        )
    return ReplayReport(outcomes=tuple(outcomes))


def check(path: Path = DEFAULT_FILE, *, approve_all: bool = False) -> ReplayReport:
    """Replay a transcripts file against this project (not from a running event loop)."""
    return asyncio.run(replay_file(path, approve_all=approve_all))


def report_lines(report: ReplayReport, *, verbose: bool = False) -> list[str]:
    """What the command prints: failures, tool-output differences, the totals."""
    lines: list[str] = []
    for outcome in report.outcomes:
        if not outcome.passed:
            lines.append(f"FAIL {outcome.name}: " + "; ".join(_reasons(outcome)))
        if outcome.stopped:
            lines.append(
                f"{outcome.name}: the policy stopped {len(outcome.stopped)} write(s): "
                + "; ".join(w.describe() for w in outcome.stopped)
            )
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
    if outcome.actual_hash != outcome.expected_hash and not outcome.intervened:
        reasons.insert(
            0, f"final db hash {outcome.actual_hash} != expected {outcome.expected_hash}"
        )
    return reasons


def run(argv: Sequence[str] | None = None) -> int:
    """The command line; 0 only when every transcript passed."""
    parser = argparse.ArgumentParser(description="Replay recorded conversations.")
    parser.add_argument("file", nargs="?", default=str(DEFAULT_FILE), help="transcripts JSONL")
    parser.add_argument("--verbose", action="store_true", help="list every difference")
    parser.add_argument(
        "--approve-all", action="store_true", help="answer every confirmation question yes"
    )
    args = parser.parse_args(argv)
    try:
        report = check(Path(args.file), approve_all=args.approve_all)
    except (OSError, InvalidTranscript) as exc:
        print(f"cannot replay {args.file}: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report_lines(report, verbose=args.verbose)))
    return 0 if report.failed == 0 and report.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
