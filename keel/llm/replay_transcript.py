"""Reading recorded transcripts for `keel.llm.replay.ReplayModel`.

A transcript is a list of OpenAI Chat Completions messages. `parse_transcript` turns it into
the recorded replies (each assistant message, with the `tool` messages recorded just
before it); `read_record` picks one record out of a JSONL file whose lines are
`{"messages": [...], ...}` (the τ-bench layout adds `task_id`, `trial`, `reward`).
Malformed input raises `InvalidTranscript` naming the file, line and message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keel.errors import KeelError
from keel.llm.port import ToolCall


class InvalidTranscript(KeelError, ValueError):
    """A transcript (or the record chosen from a JSONL file) cannot be replayed."""

    code = "keel.model.invalid_transcript"


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedToolResult:
    """A recorded `tool` message: the result the recorded tool returned."""

    tool_call_id: str
    content: str


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordedReply:
    """One recorded assistant message, and the tool results recorded just before it."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results_before: tuple[RecordedToolResult, ...] = ()
    """The `tool` messages between the previous assistant message and this one."""
    message_index: int = 0
    """Position of the assistant message in the transcript (for messages to people)."""


def parse_transcript(messages: Sequence[Mapping[str, Any]], source: str) -> list[RecordedReply]:
    """The replies of a transcript; raises `InvalidTranscript` naming the bad message."""
    replies: list[RecordedReply] = []
    results: list[RecordedToolResult] = []
    for position, message in enumerate(messages):
        where = f"{source}: message {position}"
        if not isinstance(message, Mapping):
            raise InvalidTranscript(f"{where} is not an object")
        role = message.get("role")
        if role == "assistant":
            text, calls = _assistant(message, where)
            replies.append(
                RecordedReply(
                    text=text,
                    tool_calls=calls,
                    tool_results_before=tuple(results),
                    message_index=position,
                )
            )
            results = []
        elif role == "tool":
            results.append(_tool_result(message, where))
        elif role not in ("system", "user", "developer"):
            raise InvalidTranscript(f"{where} has an unknown role {role!r}")
    return replies


def _assistant(message: Mapping[str, Any], where: str) -> tuple[str | None, tuple[ToolCall, ...]]:
    content = message.get("content")
    if isinstance(content, list):
        # Content parts: only text parts can be replayed as reply text.
        content = "".join(
            str(part.get("text", "")) for part in content if isinstance(part, Mapping)
        )
    if content is not None and not isinstance(content, str):
        raise InvalidTranscript(f"{where}: `content` must be text or null")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise InvalidTranscript(f"{where}: `tool_calls` must be a list")
    calls = tuple(_tool_call(call, f"{where}, tool call {n}") for n, call in enumerate(raw_calls))
    return content, calls


def _tool_call(call: Any, where: str) -> ToolCall:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise InvalidTranscript(f"{where} has no `function`")
    call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
    if not isinstance(call_id, str) or not isinstance(name, str) or not name:
        raise InvalidTranscript(f"{where} needs a string `id` and `function.name`")
    if isinstance(arguments, Mapping):
        # Some recorders store the arguments parsed; the wire form is JSON text.
        arguments = json.dumps(arguments)
    if not isinstance(arguments, str):
        raise InvalidTranscript(f"{where}: `function.arguments` must be JSON text")
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _tool_result(message: Mapping[str, Any], where: str) -> RecordedToolResult:
    call_id, content = message.get("tool_call_id"), message.get("content")
    if not isinstance(call_id, str) or not isinstance(content, str):
        raise InvalidTranscript(f"{where}: a tool message needs `tool_call_id` and `content`")
    return RecordedToolResult(tool_call_id=call_id, content=content)


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordSelector:
    """Which record of a JSONL file: by `index`, by `record_id`, or by `task_id` (+ `trial`)."""

    index: int | None
    record_id: str | None
    task_id: int | None
    trial: int | None

    def check(self) -> None:
        chosen = [self.index, self.record_id, self.task_id]
        if sum(value is not None for value in chosen) != 1:
            raise InvalidTranscript("choose a record by exactly one of index, record_id, task_id")
        if self.trial is not None and self.task_id is None:
            raise InvalidTranscript("`trial` needs `task_id`")

    def matches(self, number: int, record: Mapping[str, Any]) -> bool:
        if self.index is not None:
            return number == self.index
        if self.record_id is not None:
            return record.get("id") == self.record_id
        if record.get("task_id") != self.task_id:
            return False
        return self.trial is None or record.get("trial") == self.trial


def read_record(path: Path, selector: RecordSelector) -> tuple[Mapping[str, Any], str]:
    """The chosen record and where it is (`path:line`); raises `InvalidTranscript`."""
    selector.check()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidTranscript(f"{path.as_posix()}: {exc}") from None
    records = [(n, text) for n, text in enumerate(lines, start=1) if text.strip()]
    for number, (line, text) in enumerate(records):
        if selector.index is not None and number != selector.index:
            continue  # only parse the line asked for
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidTranscript(f"{path.as_posix()}:{line}: not JSON ({exc.msg})") from None
        if isinstance(record, Mapping) and selector.matches(number, record):
            return record, f"{path.as_posix()}:{line}"
    raise InvalidTranscript(f"{path.as_posix()}: no record matches {_describe(selector)}")


def _describe(selector: RecordSelector) -> str:
    if selector.index is not None:
        return f"index {selector.index}"
    if selector.record_id is not None:
        return f"id {selector.record_id!r}"
    trial = "" if selector.trial is None else f", trial {selector.trial}"
    return f"task_id {selector.task_id}{trial}"


__all__ = [
    "InvalidTranscript",
    "RecordSelector",
    "RecordedReply",
    "RecordedToolResult",
    "parse_transcript",
    "read_record",
]
