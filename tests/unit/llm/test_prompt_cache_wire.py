"""Prompt caching on the wire: Anthropic `cache_control` breakpoints and OpenAI's
`prompt_cache_key` in the request bodies, and both providers' cached-token counts read
into `Usage` (local servers speaking each provider's wire format)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic_server
import openai_server
import pytest

from keel.llm.anthropic import AnthropicModel
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import (
    ModelRequest,
    PromptCache,
    StreamDone,
    ToolSchema,
    Usage,
    assistant_message,
    system_message,
    user_message,
)

STABLE = "You are Keel.\n\n## Rules\n- Be brief."
VOLATILE = "## Now\nIt is Thursday 2026-01-01 09:30 UTC."
PROMPT = f"{STABLE}\n\n{VOLATILE}"
TOOLS = (
    ToolSchema(name="lookup_order", description="Find an order.", parameters={}),
    ToolSchema(name="ping", description="", parameters={}),
)
CACHE = PromptCache(stable_system_chars=len(STABLE), key="keel-0123")
EPHEMERAL = {"type": "ephemeral"}


def _request(cache: PromptCache = CACHE) -> ModelRequest:
    messages = (system_message(PROMPT), user_message("Where is A-17?"))
    return ModelRequest(messages=messages, tools=TOOLS, cache=cache)


# Anthropic ---------------------------------------------------------------------------------


@pytest.fixture
def claude() -> Iterator[anthropic_server.FakeAnthropicServer]:
    with anthropic_server.serve() as fake:
        yield fake


def _claude(server: anthropic_server.FakeAnthropicServer) -> AnthropicModel:
    return AnthropicModel(model="claude-test", api_key="sk-ant-test", base_url=server.base_url)


def _with_cache_usage(body: dict[str, Any], *, fresh: int, read: int, written: int) -> None:
    body["usage"] = {
        "input_tokens": fresh,
        "output_tokens": 5,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
    }


async def test_anthropic_marks_the_tools_and_the_stable_system_block(
    claude: anthropic_server.FakeAnthropicServer,
) -> None:
    claude.reply_json(anthropic_server.message_body([anthropic_server.text_block("On its way.")]))

    await _claude(claude).complete(_request())

    body = claude.bodies()[0]
    assert body["system"] == [
        {"type": "text", "text": STABLE, "cache_control": EPHEMERAL},
        {"type": "text", "text": f"\n\n{VOLATILE}"},
    ]
    assert "".join(block["text"] for block in body["system"]) == PROMPT  # the same text read
    assert [tool.get("cache_control") for tool in body["tools"]] == [None, EPHEMERAL]
    assert "cache_control" not in json.dumps(body["messages"])


async def test_anthropic_marks_the_history_before_the_closing_volatile_text(
    claude: anthropic_server.FakeAnthropicServer,
) -> None:
    # Keel's layout: the stable prompt opens the request, the volatile part closes it.
    claude.reply_json(anthropic_server.message_body([anthropic_server.text_block("Sure.")]))
    messages = (
        system_message(STABLE),
        user_message("Where is A-17?"),
        assistant_message("It ships today.", ()),
        user_message("And A-18?"),
        system_message(VOLATILE),
    )
    cache = PromptCache(stable_system_chars=len(STABLE), key="keel-0123")
    await _claude(claude).complete(ModelRequest(messages=messages, tools=TOOLS, cache=cache))

    body = claude.bodies()[0]
    assert body["system"] == [{"type": "text", "text": STABLE, "cache_control": EPHEMERAL}]
    last = body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [
        {"type": "text", "text": "And A-18?", "cache_control": EPHEMERAL},
        {"type": "text", "text": VOLATILE},
    ]
    assert json.dumps(body["messages"]).count("cache_control") == 1


async def test_anthropic_request_without_cache_hints_is_unchanged(
    claude: anthropic_server.FakeAnthropicServer,
) -> None:
    claude.reply_json(anthropic_server.message_body([anthropic_server.text_block("Hi.")]))

    await _claude(claude).complete(_request(PromptCache()))

    body = claude.bodies()[0]
    assert body["system"] == PROMPT
    assert "cache_control" not in json.dumps(body)


async def test_anthropic_cached_tokens_are_read_and_counted_in_the_input(
    claude: anthropic_server.FakeAnthropicServer,
) -> None:
    body = anthropic_server.message_body([anthropic_server.text_block("On its way.")])
    _with_cache_usage(body, fresh=40, read=1800, written=200)
    claude.reply_json(body)

    response = await _claude(claude).complete(_request())

    assert response.usage == Usage(
        input_tokens=2040, output_tokens=5, cached_input_tokens=1800, cache_write_tokens=200
    )


async def test_anthropic_streamed_cached_tokens_are_read(
    claude: anthropic_server.FakeAnthropicServer,
) -> None:
    kind, start = anthropic_server.message_start(input_tokens=40)
    _with_cache_usage(start["message"], fresh=40, read=1792, written=0)
    claude.reply_stream(
        [
            (kind, start),
            anthropic_server.block_start(0, anthropic_server.text_block("")),
            anthropic_server.text_delta(0, "On its way."),
            anthropic_server.block_stop(0),
            anthropic_server.message_delta("end_turn", output_tokens=9),
            anthropic_server.message_stop(),
        ]
    )

    events = [event async for event in _claude(claude).stream(_request())]

    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.usage == Usage(
        input_tokens=1832, output_tokens=9, cached_input_tokens=1792, cache_write_tokens=0
    )
    assert claude.bodies()[0]["system"][0]["cache_control"] == EPHEMERAL


# OpenAI ------------------------------------------------------------------------------------


@pytest.fixture
def gpt() -> Iterator[openai_server.FakeOpenAIServer]:
    with openai_server.serve() as fake:
        yield fake


def _gpt(server: openai_server.FakeOpenAIServer, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(model="gpt-test", api_key="sk-test", base_url=server.base_url, **options)


def _cached_completion(cached: int) -> dict[str, Any]:
    body = openai_server.completion(content="On its way.")
    body["usage"] = {
        "prompt_tokens": 2006,
        "completion_tokens": 7,
        "total_tokens": 2013,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return body


async def test_openai_sends_the_conversations_prompt_cache_key_and_reads_cached_tokens(
    gpt: openai_server.FakeOpenAIServer,
) -> None:
    gpt.reply_json(_cached_completion(1920))

    response = await _gpt(gpt).complete(_request())

    body = gpt.requests[0].body
    assert body["prompt_cache_key"] == "keel-0123"
    assert body["messages"][0] == {"role": "system", "content": PROMPT}  # one message, whole
    assert response.usage == Usage(input_tokens=2006, output_tokens=7, cached_input_tokens=1920)


async def test_openai_stream_sends_the_key_and_reads_cached_tokens(
    gpt: openai_server.FakeOpenAIServer,
) -> None:
    usage = openai_server.chunk(usage=(2006, 7))
    usage["usage"]["prompt_tokens_details"] = {"cached_tokens": 1024}
    gpt.reply_stream(
        [
            openai_server.chunk({"role": "assistant", "content": "Hi."}),
            openai_server.chunk({}, finish_reason="stop"),
            usage,
        ]
    )

    events = [event async for event in _gpt(gpt).stream(_request())]

    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.response.usage.cached_input_tokens == 1024
    assert gpt.requests[0].body["prompt_cache_key"] == "keel-0123"


async def test_openai_sends_no_key_when_told_not_to_or_when_the_request_has_none(
    gpt: openai_server.FakeOpenAIServer,
) -> None:
    gpt.reply_json(openai_server.completion(content="Hi."))
    gpt.reply_json(openai_server.completion(content="Hi."))

    await _gpt(gpt, send_cache_key=False).complete(_request())
    await _gpt(gpt).complete(_request(PromptCache(stable_system_chars=len(STABLE))))

    assert ["prompt_cache_key" in request.body for request in gpt.requests] == [False, False]
