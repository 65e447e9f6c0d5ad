"""`keel.testing.openai_wire_server.OpenAIWireServer` through the real `OpenAIChatModel`
(official `openai` SDK): plain and streamed replies, tool calls, what the script records,
the thread hand-off to the script's event loop, errors."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from types import MappingProxyType

import pytest

from keel.llm.errors import InvalidModelRequest, ProviderUnavailable
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import (
    ModelRequest,
    ModelResponse,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
    system_message,
    user_message,
)
from keel.testing import ScriptedModel
from keel.testing.openai_wire_server import OpenAIWireServer

LOOKUP = ToolSchema(
    name="lookup_order",
    description="Find an order by id.",
    parameters=MappingProxyType(
        {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    ),
)
REQUEST = ModelRequest(
    messages=(system_message("Be brief."), user_message("where is PX-1?")), tools=(LOOKUP,)
)
CALL: dict[str, object] = {"name": "lookup_order", "arguments": {"order_id": "PX-1"}}
CALL_REPLY: dict[str, object] = {"text": "Let me look.", "tool_calls": [CALL]}


@pytest.fixture
def server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(tier_of=lambda model: {"gpt-mini": "router"}.get(model, "default")) as s:
        yield s


@pytest.fixture
async def adapter(server: OpenAIWireServer) -> AsyncIterator[OpenAIChatModel]:
    model = OpenAIChatModel(model="gpt-test", base_url=server.base_url, timeout=5)
    yield model
    await model.aclose()


async def _streamed(model: OpenAIChatModel, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(request)]


async def test_a_plain_reply_and_what_the_script_saw(
    server: OpenAIWireServer, adapter: OpenAIChatModel
) -> None:
    script = ScriptedModel(["Your parcel is on its way."])
    server.use(script)

    response = await adapter.complete(REQUEST)

    assert response == ModelResponse(
        text="Your parcel is on its way.", stop_reason="end_turn", model="gpt-test"
    )
    (seen,) = script.requests
    assert seen.messages == REQUEST.messages
    assert [(t.name, t.description, dict(t.parameters)) for t in seen.tools] == [
        (LOOKUP.name, LOOKUP.description, json.loads(json.dumps(dict(LOOKUP.parameters))))
    ]
    assert seen.tier == "default"
    (wire,) = server.requests
    assert not wire.stream and wire.body["model"] == "gpt-test"


async def test_tool_calls_keep_their_ids_and_arguments(
    server: OpenAIWireServer, adapter: OpenAIChatModel
) -> None:
    server.use(ScriptedModel([CALL_REPLY]))

    response = await adapter.complete(REQUEST)

    assert response.text == "Let me look."
    assert response.tool_calls == (
        ToolCall(id="call_1", name="lookup_order", arguments='{"order_id": "PX-1"}'),
    )
    assert response.stop_reason == "tool_use"


async def test_a_streamed_reply_arrives_in_pieces_and_assembles_to_the_same_response(
    server: OpenAIWireServer, adapter: OpenAIChatModel
) -> None:
    reply = {**CALL_REPLY, "tool_calls": [{**CALL, "id": "c1"}]}
    server.use(ScriptedModel([reply, reply]))
    whole = await adapter.complete(REQUEST)

    events = await _streamed(adapter, REQUEST)

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me l", "ook."]
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(index=0, id="c1", name="lookup_order", arguments="")
    assert "".join(c.arguments for c in calls) == '{"order_id": "PX-1"}'
    assert len(calls) == 3
    done = events[-1]
    assert isinstance(done, StreamDone) and done.response == whole
    wire = server.requests[-1]
    assert wire.stream and wire.body["stream_options"] == {"include_usage": True}


async def test_the_usage_option_and_the_served_model_id() -> None:
    usage = Usage(input_tokens=2000, output_tokens=500)
    with OpenAIWireServer(usage=usage, served_model=lambda m: f"{m}-0613") as server:
        server.use(ScriptedModel(["Hi.", "Hi."]))
        model = OpenAIChatModel(model="gpt-test", base_url=server.base_url, timeout=5)
        try:
            plain = await model.complete(REQUEST)
            streamed = await _streamed(model, REQUEST)
        finally:
            await model.aclose()
    assert (plain.usage, plain.model) == (usage, "gpt-test-0613")
    done = streamed[-1]
    assert isinstance(done, StreamDone)
    assert (done.response.usage, done.response.model) == (usage, "gpt-test-0613")


async def test_tier_of_gives_the_recorded_request_its_tier(server: OpenAIWireServer) -> None:
    script = ScriptedModel(["a"])
    server.use(script)
    model = OpenAIChatModel(model="gpt-mini", base_url=server.base_url, timeout=5)
    try:
        await model.complete(REQUEST)
    finally:
        await model.aclose()
    assert [r.tier for r in script.requests] == ["router"]


async def test_the_script_is_consumed_on_its_own_event_loop_thread(
    server: OpenAIWireServer, adapter: OpenAIChatModel
) -> None:
    threads: list[int] = []

    class Watched(ScriptedModel):
        async def complete(self, request: ModelRequest) -> ModelResponse:
            threads.append(threading.get_ident())
            return await super().complete(request)

    server.use(Watched(["one", "two"]))
    await asyncio.gather(adapter.complete(REQUEST), adapter.complete(REQUEST))

    assert threads == [threading.get_ident()] * 2


async def test_an_exhausted_script_is_a_400_and_is_remembered(
    server: OpenAIWireServer, adapter: OpenAIChatModel
) -> None:
    script = ScriptedModel()
    server.use(script)

    with pytest.raises(InvalidModelRequest, match="no reply left for model request #1"):
        await adapter.complete(REQUEST)
    assert script.exhaustion is not None


async def test_without_a_script_the_server_answers_500(adapter: OpenAIChatModel) -> None:
    with pytest.raises(ProviderUnavailable):
        await adapter.complete(REQUEST)


def _post(url: str, data: bytes) -> int:
    request = urllib.request.Request(url, data=data, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return error.code


async def test_malformed_requests_are_refused(server: OpenAIWireServer) -> None:
    server.use(ScriptedModel())
    url = server.base_url + "/chat/completions"
    # A blocking client must run off the loop that owns the script.
    assert await asyncio.to_thread(_post, url, b"{oops") == 400
    assert await asyncio.to_thread(_post, url, b'{"messages": "hi"}') == 400
    assert await asyncio.to_thread(_post, url, b'{"messages": [], "tools": [1]}') == 400
    assert await asyncio.to_thread(_post, server.base_url + "/embeddings", b"{}") == 404
