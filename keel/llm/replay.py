"""`ReplayModel`: a recorded conversation's assistant messages, replayed as model replies.

A transcript is a list of OpenAI Chat Completions messages (`system`, `user`, `assistant`
with `content` and/or `tool_calls`, `tool`). Each assistant message is the next reply, in
order; tool-call ids and the raw `arguments` text are kept as recorded. So a real model's
recorded behaviour re-runs through Keel deterministically:

    model = ReplayModel.from_jsonl("airline/transcripts.jsonl", task_id=0, trial=1, strict=True)
    ...  # drive the engine (its tools answer the recorded calls)
    model.assert_complete()
    assert not model.divergences

In `strict` mode every request is checked against the recording: the tool results Keel
fed back (the `tool` messages after the request's last assistant message) are compared,
by position, with the `tool` messages recorded between the previous reply and this one.
Differences are recorded in `divergences`, never raised: a replay that drifts (a tool
implemented slightly differently) should still run to the end so all of it can be seen.

`from_jsonl` reads one record of a JSONL file whose lines are `{"messages": [...], ...}`
(the τ-bench layout: `task_id`, `trial`, `reward`, `messages`). No IO besides that read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from keel.llm.errors import ModelError
from keel.llm.port import Message, ModelRequest, ModelResponse
from keel.llm.replay_transcript import (
    InvalidTranscript,
    RecordedReply,
    RecordedToolResult,
    RecordSelector,
    parse_transcript,
    read_record,
)


class ReplayExhausted(ModelError):
    """The engine asked for more replies than the transcript recorded."""

    code = "keel.model.replay_exhausted"


class ReplayNotFinished(ModelError):
    """The replay ended with recorded replies nobody asked for."""

    code = "keel.model.replay_not_finished"


DivergenceKind = Literal["missing", "unexpected", "tool_call_id", "content"]
"""`missing`: a recorded tool result was not fed back; `unexpected`: one was fed back that
the recording does not have; `tool_call_id` / `content`: the result at that position differs."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Divergence:
    """One way the tool results Keel fed back differ from the recording."""

    reply: int
    """0-based number of the reply being asked for."""
    position: int
    """0-based position of the tool result among those fed back before that reply."""
    kind: DivergenceKind
    expected: str | None
    """The recorded value (content or id), None for `unexpected`."""
    actual: str | None
    """The value Keel fed back, None for `missing`."""

    def describe(self) -> str:
        """One line for people."""
        return (
            f"reply {self.reply}, tool result {self.position}: {self.kind}; "
            f"recorded {_clip(self.expected)}, fed back {_clip(self.actual)}"
        )


class ReplayModel:
    """A `keel.llm.Model` answering with the assistant messages of a recorded transcript."""

    def __init__(
        self,
        replies: Iterable[RecordedReply],
        *,
        strict: bool = False,
        name: str = "replay",
        source: str = "transcript",
    ) -> None:
        self._queue: deque[RecordedReply] = deque(replies)
        self._total = len(self._queue)
        self._requests: list[ModelRequest] = []
        self._divergences: list[Divergence] = []
        self._exhaustion: ReplayExhausted | None = None
        self._strict = strict
        self._name = name
        self._source = source

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[Mapping[str, Any]],
        *,
        strict: bool = False,
        name: str = "replay",
        source: str = "transcript",
    ) -> ReplayModel:
        """Replay these OpenAI-format messages; raises `InvalidTranscript` when malformed."""
        return cls(parse_transcript(messages, source), strict=strict, name=name, source=source)

    @classmethod
    def from_jsonl(
        cls,
        path: Path | str,
        index: int | None = None,
        *,
        record_id: str | None = None,
        task_id: int | None = None,
        trial: int | None = None,
        strict: bool = False,
        name: str = "replay",
    ) -> ReplayModel:
        """Replay one record of a JSONL transcript file.

        Choose the record by `index` (0-based, blank lines skipped), by `record_id` (the
        record's `"id"`), or by `task_id` and optionally `trial` (the τ-bench keys; without
        `trial`, the first trial of the task). Raises `InvalidTranscript`.
        """
        selector = RecordSelector(index=index, record_id=record_id, task_id=task_id, trial=trial)
        record, where = read_record(Path(path), selector)
        messages = record.get("messages")
        if not isinstance(messages, list):
            raise InvalidTranscript(f"{where}: the record has no `messages` list")
        return cls.from_messages(messages, strict=strict, name=name, source=where)

    @property
    def requests(self) -> tuple[ModelRequest, ...]:
        """Every request received so far, answered or not, in order."""
        return tuple(self._requests)

    @property
    def remaining(self) -> tuple[RecordedReply, ...]:
        """The recorded replies not yet given, in order."""
        return tuple(self._queue)

    @property
    def divergences(self) -> tuple[Divergence, ...]:
        """Differences found in strict mode, in the order they were found."""
        return tuple(self._divergences)

    @property
    def exhaustion(self) -> ReplayExhausted | None:
        """The first `ReplayExhausted` raised, if any (the engine may have swallowed it)."""
        return self._exhaustion

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer with the next recorded reply; raises `ReplayExhausted` when none is left."""
        self._requests.append(request)
        number = len(self._requests) - 1
        if not self._queue:
            error = ReplayExhausted(self._exhausted_message(request, number))
            self._exhaustion = self._exhaustion or error
            raise error
        reply = self._queue.popleft()
        if self._strict:
            fed = fed_tool_results(request.messages)
            self._divergences.extend(compare(number, reply.tool_results_before, fed))
        stop = "tool_use" if reply.tool_calls else "end_turn"
        return ModelResponse(
            text=reply.text, tool_calls=reply.tool_calls, stop_reason=stop, model=self._name
        )

    def assert_complete(self) -> None:
        """Raise the recorded `ReplayExhausted`, or `ReplayNotFinished` for leftovers."""
        if self._exhaustion is not None:
            raise self._exhaustion
        if self._queue:
            left = len(self._queue)
            first = self._queue[0].message_index
            raise ReplayNotFinished(
                f"{self._source}: {left} of {self._total} recorded reply(ies) were not asked "
                f"for (the first is message {first})"
            )

    def _exhausted_message(self, request: ModelRequest, number: int) -> str:
        last_user = next(
            (m["content"] for m in reversed(request.messages) if m["role"] == "user"), None
        )
        return (
            f"{self._source}: reply {number + 1} was asked for, but the transcript records "
            f"only {self._total}; last user message: {_clip(last_user)}"
        )


def fed_tool_results(messages: Sequence[Message]) -> tuple[RecordedToolResult, ...]:
    """The `tool` messages after the last assistant message (all of them if there is none)."""
    start = 0
    for position, message in enumerate(messages):
        if message["role"] == "assistant":
            start = position + 1
    return tuple(
        RecordedToolResult(tool_call_id=m["tool_call_id"], content=m["content"])
        for m in messages[start:]
        if m["role"] == "tool"
    )


def compare(
    reply: int,
    recorded: Sequence[RecordedToolResult],
    fed: Sequence[RecordedToolResult],
) -> list[Divergence]:
    """How `fed` differs from `recorded`, position by position (ids may repeat in a log)."""
    found: list[Divergence] = []
    for position in range(max(len(recorded), len(fed))):
        want = recorded[position] if position < len(recorded) else None
        got = fed[position] if position < len(fed) else None
        found.extend(_differences(reply, position, want, got))
    return found


def _differences(
    reply: int, position: int, want: RecordedToolResult | None, got: RecordedToolResult | None
) -> list[Divergence]:
    def divergence(kind: DivergenceKind, expected: str | None, actual: str | None) -> Divergence:
        return Divergence(
            reply=reply, position=position, kind=kind, expected=expected, actual=actual
        )

    if got is None:
        return [] if want is None else [divergence("missing", want.content, None)]
    if want is None:
        return [divergence("unexpected", None, got.content)]
    found: list[Divergence] = []
    if want.tool_call_id != got.tool_call_id:
        found.append(divergence("tool_call_id", want.tool_call_id, got.tool_call_id))
    if want.content != got.content:
        found.append(divergence("content", want.content, got.content))
    return found


def _clip(text: str | None, limit: int = 80) -> str:
    if text is None:
        return "nothing"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


__all__ = [
    "Divergence",
    "DivergenceKind",
    "InvalidTranscript",
    "RecordedReply",
    "RecordedToolResult",
    "ReplayExhausted",
    "ReplayModel",
    "ReplayNotFinished",
    "compare",
    "fed_tool_results",
    "parse_transcript",
]
