"""`ReplayModel`: recorded assistant messages replayed as replies; strict divergence checks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from keel.llm import Message, ModelError, ModelRequest, ToolCall, tool_message, user_message
from keel.llm.replay import (
    Divergence,
    InvalidTranscript,
    ReplayExhausted,
    ReplayModel,
    ReplayNotFinished,
)

TAU_AIRLINE = Path(__file__).parents[4] / "shared/data/tau-bench/airline/transcripts.jsonl"

TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are an airline agent."},
    {"role": "user", "content": "Change my flight, I'm mia_li_3668."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_user_details", "arguments": '{"user_id":"mia_li_3668"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "get_user_details", "content": "{}"},
    {
        "role": "assistant",
        "content": "Checking your reservation.",
        "tool_calls": [
            {
                "id": "call_1",  # ids are reused in real recordings
                "type": "function",
                "function": {"name": "think", "arguments": '{"thought": "x"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "think", "content": ""},
    {"role": "assistant", "content": "Which reservation?"},
    {"role": "user", "content": "ABC123"},
    {"role": "assistant", "content": "Done."},
]


def request(*messages: Mapping[str, Any]) -> ModelRequest:
    return ModelRequest(messages=tuple(cast(Message, m) for m in messages))


def prefix_before(messages: Sequence[Mapping[str, Any]], reply: int) -> ModelRequest:
    """The recorded conversation up to (not including) assistant message number `reply`."""
    positions = [n for n, m in enumerate(messages) if m["role"] == "assistant"]
    return request(*messages[: positions[reply]])


async def test_replies_come_in_recorded_order_with_ids_and_raw_arguments() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT, name="gpt-4o")
    first = await model.complete(request(user_message("hi")))
    assert first.text is None
    assert first.tool_calls == (
        ToolCall(id="call_1", name="get_user_details", arguments='{"user_id":"mia_li_3668"}'),
    )
    assert (first.stop_reason, first.model) == ("tool_use", "gpt-4o")
    second = await model.complete(request(user_message("hi")))
    assert second.text == "Checking your reservation."
    assert second.tool_calls[0].arguments == '{"thought": "x"}'
    third = await model.complete(request(user_message("hi")))
    assert (third.text, third.tool_calls, third.stop_reason) == (
        "Which reservation?",
        (),
        "end_turn",
    )
    assert (await model.complete(request(user_message("ABC123")))).text == "Done."
    model.assert_complete()
    assert len(model.requests) == 4 and model.remaining == ()


async def test_asking_for_more_raises_replay_exhausted_and_remembers_it() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT[:3], source="short")
    await model.complete(request(user_message("hi")))
    with pytest.raises(ReplayExhausted) as caught:
        await model.complete(request(user_message("one more?")))
    assert isinstance(caught.value, ModelError)
    assert "short" in str(caught.value) and "one more?" in str(caught.value)
    assert model.exhaustion is caught.value
    with pytest.raises(ReplayExhausted):
        model.assert_complete()  # even when the engine swallowed the first raise


async def test_leftover_replies_fail_assert_complete() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT)
    await model.complete(request(user_message("hi")))
    assert len(model.remaining) == 3
    with pytest.raises(ReplayNotFinished, match="3 of 4"):
        model.assert_complete()


async def test_strict_mode_accepts_the_recorded_tool_results() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT, strict=True)
    for reply in range(4):
        await model.complete(prefix_before(TRANSCRIPT, reply))
    assert model.divergences == ()
    model.assert_complete()


async def test_strict_mode_records_divergences_without_raising() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT, strict=True)
    await model.complete(prefix_before(TRANSCRIPT, 0))
    changed = [*TRANSCRIPT[:3], tool_message("call_9", '{"name": "Mia"}')]
    response = await model.complete(request(*changed))
    assert response.text == "Checking your reservation."
    assert model.divergences == (
        Divergence(reply=1, position=0, kind="tool_call_id", expected="call_1", actual="call_9"),
        Divergence(reply=1, position=0, kind="content", expected="{}", actual='{"name": "Mia"}'),
    )
    # The think result is not fed back at all: `missing`.
    await model.complete(request(*TRANSCRIPT[:5]))
    assert model.divergences[-1] == Divergence(
        reply=2, position=0, kind="missing", expected="", actual=None
    )
    # An extra tool result where the recording has a user message: `unexpected`.
    extra = [*TRANSCRIPT[:7], tool_message("call_2", "surprise")]
    await model.complete(request(*extra))
    assert model.divergences[-1].kind == "unexpected"
    assert model.divergences[-1].actual == "surprise"
    assert "reply 3, tool result 0: unexpected" in model.divergences[-1].describe()
    model.assert_complete()


async def test_without_strict_nothing_is_compared() -> None:
    model = ReplayModel.from_messages(TRANSCRIPT)
    await model.complete(request(tool_message("zzz", "not recorded")))
    assert model.divergences == ()


def test_malformed_transcripts_are_rejected_with_their_position() -> None:
    with pytest.raises(InvalidTranscript, match="message 1 has an unknown role"):
        ReplayModel.from_messages([TRANSCRIPT[0], {"role": "robot", "content": "x"}])
    bad_call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}
    with pytest.raises(InvalidTranscript, match="message 0, tool call 0 has no `function`"):
        ReplayModel.from_messages([bad_call])
    with pytest.raises(InvalidTranscript, match="tool message needs"):
        ReplayModel.from_messages([{"role": "tool", "content": "x"}])
    with pytest.raises(InvalidTranscript, match="content"):
        ReplayModel.from_messages([{"role": "assistant", "content": 3}])


async def test_parsed_arguments_and_content_parts_are_accepted() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]
    model = ReplayModel.from_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "assistant", "content": parts},
        ]
    )
    first = await model.complete(request(user_message("x")))
    assert json.loads(first.tool_calls[0].arguments) == {"a": 1}
    assert (await model.complete(request(user_message("x")))).text == "Hello"


def write_jsonl(tmp_path: Path) -> Path:
    records = [
        {"task_id": 0, "trial": 0, "messages": TRANSCRIPT[:3]},
        {"task_id": 0, "trial": 1, "messages": TRANSCRIPT[:7]},
        {"id": "support-7", "messages": TRANSCRIPT},
    ]
    path = tmp_path / "transcripts.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records[:2]) + "\n\n" + json.dumps(records[2]))
    return path


def test_from_jsonl_selects_a_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path)
    assert len(ReplayModel.from_jsonl(path, 0).remaining) == 1
    assert len(ReplayModel.from_jsonl(path, 2).remaining) == 4  # the blank line is skipped
    assert len(ReplayModel.from_jsonl(path, task_id=0, trial=1).remaining) == 3
    assert len(ReplayModel.from_jsonl(path, task_id=0).remaining) == 1
    assert len(ReplayModel.from_jsonl(str(path), record_id="support-7").remaining) == 4


async def test_from_jsonl_names_file_and_line_in_messages(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path)
    model = ReplayModel.from_jsonl(path, record_id="support-7")
    for _ in range(4):
        await model.complete(request(user_message("x")))
    with pytest.raises(ReplayExhausted, match=r"transcripts\.jsonl:4"):
        await model.complete(request(user_message("x")))


def test_from_jsonl_errors(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path)
    with pytest.raises(InvalidTranscript, match="no record matches task_id 3, trial 0"):
        ReplayModel.from_jsonl(path, task_id=3, trial=0)
    with pytest.raises(InvalidTranscript, match="no record matches index 9"):
        ReplayModel.from_jsonl(path, 9)
    with pytest.raises(InvalidTranscript, match="exactly one"):
        ReplayModel.from_jsonl(path)
    with pytest.raises(InvalidTranscript, match="exactly one"):
        ReplayModel.from_jsonl(path, 0, task_id=0)
    with pytest.raises(InvalidTranscript, match="`trial` needs `task_id`"):
        ReplayModel.from_jsonl(path, 0, trial=1)
    with pytest.raises(InvalidTranscript, match=r"missing\.jsonl"):
        ReplayModel.from_jsonl(tmp_path / "missing.jsonl", 0)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"messages": []}\n{not json\n')
    with pytest.raises(InvalidTranscript, match=r"broken\.jsonl:2: not JSON"):
        ReplayModel.from_jsonl(broken, 1)
    no_messages = tmp_path / "none.jsonl"
    no_messages.write_text('{"task_id": 1}\n')
    with pytest.raises(InvalidTranscript, match="no `messages` list"):
        ReplayModel.from_jsonl(no_messages, 0)


@pytest.mark.skipif(not TAU_AIRLINE.exists(), reason="tau-bench data not present")
async def test_recorded_tau_bench_conversations_replay_without_divergence() -> None:
    lines = TAU_AIRLINE.read_text(encoding="utf-8").splitlines()
    for index in (0, 3, 12):  # 3 and 12 have replies with both text and a tool call
        messages = json.loads(lines[index])["messages"]
        model = ReplayModel.from_jsonl(TAU_AIRLINE, index, strict=True)
        recorded = [m for m in messages if m["role"] == "assistant"]
        for reply, message in enumerate(recorded):
            response = await model.complete(prefix_before(messages, reply))
            assert response.text == message.get("content")
            calls = [c.to_message_part() for c in response.tool_calls]
            assert calls == [
                {"id": c["id"], "type": "function", "function": c["function"]}
                for c in message.get("tool_calls") or []
            ]
        assert model.divergences == ()
        model.assert_complete()


@pytest.mark.skipif(not TAU_AIRLINE.exists(), reason="tau-bench data not present")
async def test_tau_bench_tool_output_drift_is_reported() -> None:
    model = ReplayModel.from_jsonl(TAU_AIRLINE, task_id=0, trial=0, strict=True)
    messages = json.loads(TAU_AIRLINE.read_text(encoding="utf-8").splitlines()[0])["messages"]
    for reply in range(len(model.remaining)):
        conversation = prefix_before(messages, reply).messages
        # A runtime on today's db.json answers `state` where the recording has `province`.
        fed = [
            cast(Message, {**m, "content": m["content"].replace('"province"', '"state"')})
            if m["role"] == "tool"
            else m
            for m in conversation
        ]
        await model.complete(request(*fed))
    drift = [d for d in model.divergences if d.kind == "content"]
    assert drift and all('"state"' in (d.actual or "") for d in drift)
    assert {d.kind for d in model.divergences} == {"content"}
    model.assert_complete()
