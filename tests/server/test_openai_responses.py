"""The Responses API and the OpenAI clients people already have, against a real `keel run`.

The official `openai` package (Responses, streaming and not, `previous_response_id` and
`conversation`; Chat Completions with no conversation named; buttons as numbered choices)
and the `openai-agents` SDK with its default model (the Responses API), each talking to
the support example served by `keel run` on a loopback port with a scripted model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai
import pytest
from live_server import live_server
from server_kit import EXAMPLE

KEY = "client-secret"
OUTAGE = """\
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
"""
"""Model replies for "my internet is down" then "LN4 7QP"."""


@contextmanager
def keel(tmp_path: Path, script: str = OUTAGE) -> Iterator[str]:
    """`keel run` of the support example answering with `script`; yields the base URL."""
    path = tmp_path / "script.yml"
    path.write_text(script, encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"app:chat:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        "KEEL_RATE_LIMIT": "off",
    }
    with live_server([str(EXAMPLE), "--model", f"scripted:{path}"], env=env, cwd=tmp_path) as base:
        yield base


def _client(base: str) -> openai.AsyncOpenAI:
    # A fresh HTTP client per call of the test's loop (closed with the loop, not after).
    return openai.AsyncOpenAI(
        base_url=f"{base}/v1", api_key=KEY, max_retries=0, http_client=httpx.AsyncClient()
    )


def _user_texts(base: str, conversation: str) -> list[str]:
    events = httpx.get(
        f"{base}/v1/conversations/{conversation}/events",
        headers={"Authorization": f"Bearer {KEY}"},
    ).json()["events"]
    return [e["event"]["text"] for e in events if e["event"]["type"] == "user_message"]


async def test_responses_continue_by_previous_response_id(tmp_path: Path) -> None:
    with keel(tmp_path) as base:
        client = _client(base)
        raw = await client.responses.with_raw_response.create(
            model="brightwave-support", input="my internet is down", instructions="ignored"
        )
        first = raw.parse()
        second = await client.responses.create(
            model="brightwave-support",
            input=[{"role": "user", "content": [{"type": "input_text", "text": "LN4 7QP"}]}],
            previous_response_id=first.id,
        )
        assert first.conversation is not None
        conversation = first.conversation.id
        users = _user_texts(base, conversation)
    assert first.object == "response" and first.status == "completed"
    assert first.id.startswith("resp_") and conversation.startswith("conv_")
    assert raw.headers["x-keel-conversation-id"] == conversation
    assert first.output_text.startswith("Hi, I'm Wren")
    assert "1. My internet is down" in first.output_text
    assert first.output_text.endswith("What's the postcode where the internet is down?")
    assert len(first.output) == 1 and first.output[0].type == "message"
    assert first.usage is not None
    assert "known fault" in second.output_text
    assert second.conversation is not None and second.conversation.id == conversation
    assert second.previous_response_id == first.id
    assert users == ["my internet is down", "LN4 7QP"]


async def test_responses_stream_the_event_sequence(tmp_path: Path) -> None:
    with keel(tmp_path) as base:
        client = _client(base)
        events = [
            event
            async for event in await client.responses.create(
                model="m", input="my internet is down", conversation="stream-1", stream=True
            )
        ]
        # The SDK's stream helper rebuilds the response from the events and checks them.
        async with client.responses.stream(
            model="m", input="LN4 7QP", conversation={"id": "stream-1"}
        ) as stream:
            final = await stream.get_final_response()
        users = _user_texts(base, "stream-1")
    kinds = [e.type for e in events]
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert set(kinds[4:-4]) == {"response.output_text.delta"} and len(kinds) >= 9
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    completed = events[-1].response  # type: ignore[union-attr]
    assert completed.output_text == deltas and deltas.startswith("Hi, I'm Wren")
    assert completed.conversation is not None and completed.conversation.id == "stream-1"
    assert "known fault" in final.output_text
    assert users == ["my internet is down", "LN4 7QP"]


async def test_responses_refuse_what_they_cannot_continue(tmp_path: Path) -> None:
    with keel(tmp_path) as base:
        client = _client(base)
        with pytest.raises(openai.BadRequestError) as unknown:
            await client.responses.create(
                model="m", input="hi", previous_response_id="resp_zz_not-ours"
            )
        with pytest.raises(openai.BadRequestError) as both:
            await client.responses.create(
                model="m", input="hi", previous_response_id="resp_6869_1", conversation="c"
            )
        with pytest.raises(openai.UnprocessableEntityError):
            await client.responses.create(model="m", input=[{"role": "system", "content": "x"}])
    assert unknown.value.code == "previous_response.not_found"
    assert both.value.code == "request.invalid"


async def test_chat_completions_without_a_conversation_and_numbered_choices(
    tmp_path: Path,
) -> None:
    script = "- text: Hello there.\n" + OUTAGE
    with keel(tmp_path, script) as base:
        client = _client(base)
        raw = await client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        conversation = raw.headers["x-keel-conversation-id"]
        first = raw.parse()
        # "1" names the first numbered choice: the turn runs with its payload.
        second = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "1"}],
            extra_headers={"X-Keel-Conversation-Id": conversation},
        )
        plain = await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "LN4 7QP"}],
            extra_headers={"X-Keel-Conversation-Id": conversation, "X-Keel-Choices": "off"},
        )
        users = _user_texts(base, conversation)
    text = first.choices[0].message.content or ""
    assert conversation.startswith("conv_")
    assert "\n\n1. My internet is down\n2. A question about my bill\n3. Change my plan" in text
    assert text.endswith("Hello there.")
    assert "What's the postcode" in (second.choices[0].message.content or "")
    assert users == ["hi", "My internet is down", "LN4 7QP"]
    assert "known fault" in (plain.choices[0].message.content or "")


async def test_agents_sdk_default_model_holds_a_conversation(tmp_path: Path) -> None:
    from agents import (
        Agent,
        Runner,
        set_default_openai_api,
        set_default_openai_client,
        set_tracing_disabled,
    )

    script = OUTAGE + OUTAGE
    with keel(tmp_path, script) as base:
        client = _client(base)
        set_tracing_disabled(True)  # the SDK would export its traces to OpenAI
        set_default_openai_api("responses")
        set_default_openai_client(client, use_for_tracing=False)
        agent = Agent(name="support", instructions="Keel's agent decides; this is ignored.")
        first = await Runner.run(agent, "my internet is down")
        second = await Runner.run(agent, "LN4 7QP", previous_response_id=first.last_response_id)
        streamed = Runner.run_streamed(agent, "my internet is down", conversation_id="agents-1")
        deltas = [
            event.data.delta
            async for event in streamed.stream_events()
            if event.type == "raw_response_event"
            and event.data.type == "response.output_text.delta"
        ]
        again = await Runner.run(agent, "LN4 7QP", conversation_id="agents-1")
        users = _user_texts(base, "agents-1")
    # The agent names no model: the SDK's default, over the Responses API (resp_ ids).
    assert agent.model is None and (first.last_response_id or "").startswith("resp_")
    assert first.final_output.endswith("What's the postcode where the internet is down?")
    assert "known fault" in second.final_output
    assert "".join(deltas) == streamed.final_output and deltas[0].startswith("Hi, I'm Wren")
    assert "known fault" in again.final_output
    assert users == ["my internet is down", "LN4 7QP"]
