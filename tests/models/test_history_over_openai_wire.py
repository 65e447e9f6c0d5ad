"""Earlier turns' tool calls and results cross the OpenAI wire as a valid Chat Completions
conversation (issue 19, item 1).

The history conversation tests (`history_tools.yml`, `history_budget_tools.yml`) run through
`OpenAIChatModel` (the official SDK) against a local `OpenAIWireServer`; then every request
body that crossed the wire is checked as the OpenAI API checks a conversation: each `tool`
message answers a call of the nearest assistant message with `tool_calls` before it, with
only tool messages between them, and every call of such a message is answered before the
next non-tool message. At least one request carries a tool result from an earlier user
turn (before the change, none did: only the current turn's calls were sent).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from wire_harness import DeltaRecorder, single_model_factory

from keel.testing.conversation import arun_paths, parse_test_file
from keel.testing.openai_wire_server import OpenAIWireServer

HERE = Path(__file__).resolve().parent
FILES = [HERE / "history_tools.yml", HERE / "history_budget_tools.yml"]


def wire_problems(messages: Sequence[Mapping[str, object]]) -> list[str]:
    """Why `messages` is not a valid Chat Completions conversation (empty when it is)."""
    problems: list[str] = []
    waiting: set[str] = set()  # calls of the last assistant tool_calls message not answered
    in_block = False  # only tool messages since that assistant message
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not in_block or call_id not in waiting:
                problems.append(f"message {index}: tool result {call_id!r} answers no open call")
            waiting.discard(str(call_id))
            continue
        if waiting:
            problems.append(f"message {index}: calls {sorted(waiting)} have no result")
        calls = message.get("tool_calls") if role == "assistant" else None
        waiting = {str(c["id"]) for c in calls} if isinstance(calls, list) else set()  # type: ignore[index]
        in_block = bool(waiting)
    if waiting:
        problems.append(f"the last calls {sorted(waiting)} have no result")
    return problems


def _earlier_tool_result(messages: Sequence[Mapping[str, object]]) -> bool:
    """A tool message comes before the request's last user message (an earlier turn's)."""
    roles = [m.get("role") for m in messages]
    last_user = max((i for i, r in enumerate(roles) if r == "user"), default=-1)
    return "tool" in roles[:last_user]


def test_the_checker_catches_orphans() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert (
        wire_problems(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ]
        )
        == []
    )
    assert wire_problems([{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c1"}])
    assert wire_problems(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "user", "content": "x"},
        ]
    )


@pytest.fixture
def server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as wire:
        yield wire


async def test_history_with_tool_results_is_valid_on_the_wire(server: OpenAIWireServer) -> None:
    observers: list[DeltaRecorder] = []
    factory = single_model_factory(server, model="gpt-4.1", stream=False, observers=observers)

    summary = await arun_paths(FILES, factory)

    cases = 0
    for path in FILES:
        parsed, _ = parse_test_file(path)
        assert parsed is not None
        cases += len(parsed.cases)
    assert summary.exit_code == 0, "\n".join(summary.lines())
    assert summary.final_line() == f"{cases} passed, 0 failed"
    bodies = [r.body for r in server.requests]
    assert bodies, "no request crossed the wire"
    for number, body in enumerate(bodies, start=1):
        assert wire_problems(body["messages"]) == [], f"request {number}"
    assert any(_earlier_tool_result(body["messages"]) for body in bodies)
