"""ScriptedModel: reply forms, deterministic ids, loud failures, script files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keel.llm import Model, ModelError, ModelRequest, ToolSchema, tool_message, user_message
from keel.testing.script_replies import InvalidReply, ScriptedReply, ScriptedToolCall, parse_reply
from keel.testing.scripted import (
    InvalidScript,
    ScriptedModel,
    ScriptExhausted,
    ScriptNotFinished,
)


def _request(text: str = "hello", *tools: str) -> ModelRequest:
    schemas = tuple(ToolSchema(name=t, description="", parameters={}) for t in tools)
    return ModelRequest(messages=(user_message(text),), tools=schemas)


async def test_bare_string_is_text_only() -> None:
    model = ScriptedModel(["Hi there"])
    response = await model.complete(_request())
    assert response.text == "Hi there"
    assert response.tool_calls == ()
    assert response.model == "scripted"


async def test_openai_form_keeps_ids_and_raw_arguments() -> None:
    reply = {
        "role": "assistant",
        "content": "checking",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "x", "arguments": '{"a": 1}'}}
        ],
    }
    response = await ScriptedModel([reply]).complete(_request())
    assert response.text == "checking"
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "x", '{"a": 1}')


async def test_short_form_encodes_mapping_arguments() -> None:
    model = ScriptedModel(
        [{"text": None, "tool_calls": [{"name": "x", "arguments": {"a": [1, "é"]}}]}]
    )
    [call] = (await model.complete(_request())).tool_calls
    assert json.loads(call.arguments) == {"a": [1, "é"]}
    assert "é" in call.arguments


async def test_missing_arguments_are_an_empty_object_and_bad_json_is_kept() -> None:
    model = ScriptedModel([{"tool_calls": [{"name": "x"}, {"name": "y", "arguments": "{oops"}]}])
    calls = (await model.complete(_request())).tool_calls
    assert [c.arguments for c in calls] == ["{}", "{oops"]


async def test_ids_are_numbered_across_the_script_in_order() -> None:
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "a"}, {"name": "b", "id": "mine"}]},
            {"tool_calls": [{"name": "c"}]},
        ]
    )
    model.add({"tool_calls": [{"name": "d"}]})
    ids = []
    for _ in range(3):
        ids += [c.id for c in (await model.complete(_request())).tool_calls]
    assert ids == ["call_1", "mine", "call_3", "call_4"]


async def test_requests_are_recorded_and_remaining_shrinks() -> None:
    model = ScriptedModel(["one", "two"])
    before = model.remaining
    assert len(before) == 2
    first = _request("a")
    await model.complete(first)
    assert model.requests == (first,)
    assert model.remaining == (ScriptedReply(text="two"),)


async def test_exhausted_names_last_user_message_and_tools() -> None:
    model = ScriptedModel(["only"])
    await model.complete(_request())
    request = ModelRequest(
        messages=(user_message("where is PX-1"), tool_message("call_1", "in transit")),
        tools=(ToolSchema(name="lookup", description="", parameters={}),),
    )
    with pytest.raises(ScriptExhausted) as info:
        await model.complete(request)
    message = str(info.value)
    assert "request #2" in message
    assert "'where is PX-1'" in message
    assert "lookup" in message
    assert "call_1" in message and "in transit" in message
    assert isinstance(info.value, ModelError)


async def test_exhaustion_is_remembered_even_if_swallowed() -> None:
    model = ScriptedModel()
    with pytest.raises(ScriptExhausted):
        await model.complete(_request("hi", "x"))
    assert model.exhaustion is not None
    with pytest.raises(ScriptExhausted):
        model.assert_complete()


def test_assert_complete_lists_leftovers() -> None:
    model = ScriptedModel(["left", {"tool_calls": [{"name": "x", "arguments": {"a": 1}}]}])
    with pytest.raises(ScriptNotFinished) as info:
        model.assert_complete()
    text = str(info.value)
    assert "2 scripted reply(ies) left over" in text
    assert "'left'" in text and 'x({"a": 1})' in text
    assert len(info.value.leftover) == 2


async def test_assert_complete_passes_when_used_up() -> None:
    model = ScriptedModel(["x"])
    await model.complete(_request())
    model.assert_complete()


def test_scripted_model_is_a_model() -> None:
    model: Model = ScriptedModel()
    assert hasattr(model, "complete")


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (42, "not a int"),
        ({"text": "a", "content": "b"}, "either 'content' or 'text'"),
        ({"txt": "a"}, "unknown key 'txt'"),
        ({"role": "user", "content": "a"}, "role must be 'assistant'"),
        ({"text": 1}, "'text' must be text"),
        ({"tool_calls": {"name": "x"}}, "must be a list"),
        ({"tool_calls": ["x"]}, "a tool call is a mapping"),
        ({"tool_calls": [{"arguments": {}}]}, "needs a 'name'"),
        ({"tool_calls": [{"name": "x", "arguments": [1]}]}, "must be a mapping or JSON text"),
        ({"tool_calls": [{"type": "f", "function": {"name": "x"}}]}, "type must be 'function'"),
        ({"tool_calls": [{"function": {"name": "x", "extra": 1}}]}, "unknown key 'extra'"),
        ({"tool_calls": [{"name": "x", "id": ""}]}, "'id' must be non-empty"),
    ],
)
def test_invalid_replies(reply: object, fragment: str) -> None:
    with pytest.raises(InvalidReply) as info:
        parse_reply(reply)
    assert fragment in str(info.value)


def test_parse_reply_passes_reply_values_through() -> None:
    reply = ScriptedReply(tool_calls=(ScriptedToolCall(name="x", arguments="{}"),))
    assert parse_reply(reply) is reply


def test_describe_summarises() -> None:
    reply = parse_reply({"text": "hi", "tool_calls": [{"name": "x"}]})
    assert reply.describe() == "text 'hi', x({})"
    assert ScriptedReply().describe() == "(empty reply)"


async def test_from_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yml"
    path.write_text(
        "- text: yes\n- tool_calls:\n    - name: lookup\n      arguments: {id: PX-1}\n- Done\n",
        encoding="utf-8",
    )
    model = ScriptedModel.from_file(path)
    assert (await model.complete(_request())).text == "yes"
    [call] = (await model.complete(_request())).tool_calls
    assert (call.id, json.loads(call.arguments)) == ("call_1", {"id": "PX-1"})
    assert (await model.complete(_request())).text == "Done"


def test_from_json_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(["a", {"content": "b"}]), encoding="utf-8")
    assert [r.text for r in ScriptedModel.from_file(path).remaining] == ["a", "b"]


@pytest.mark.parametrize(
    ("name", "text", "code", "line"),
    [
        ("s.yml", "text: hi\n", "script.not_list", 1),
        ("s.yml", "- ok\n- text: hi\n  colour: red\n", "script.reply.invalid", 3),
        ("s.yml", "- [unclosed\n", "yaml.syntax", 2),
        ("s.json", '["a",\n  oops]', "script.json", 2),
    ],
)
def test_invalid_script_files(tmp_path: Path, name: str, text: str, code: str, line: int) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidScript) as info:
        ScriptedModel.from_file(path)
    [found] = info.value.diagnostics
    assert (found.code, found.line) == (code, line)
    assert str(path.as_posix()) in str(info.value)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidScript) as info:
        ScriptedModel.from_file(tmp_path / "nope.yml")
    assert info.value.diagnostics[0].code == "script.unreadable"
