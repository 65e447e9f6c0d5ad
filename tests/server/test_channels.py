"""Channels: Rasa's REST webhook and the OpenAI-compatible endpoints, in process."""

from __future__ import annotations

import json

from server_kit import ACTIVATE_OUTAGE, ALICE, SET_POSTCODE, ServeFactory


async def test_rest_webhook_answers_rasa_shaped_messages(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        r = await s.client.post(
            "/webhooks/rest/webhook",
            json={"sender": "rasa-1", "message": "internet down", "metadata": {"channel": "web"}},
            headers=ALICE,
        )
        missing = await s.client.post("/webhooks/rest/webhook", json={"sender": "x"}, headers=ALICE)
        stored = await s.store.last_seq("alice/rasa-1")
    assert r.status_code == 200
    messages = r.json()
    assert {m["recipient_id"] for m in messages} == {"rasa-1"}
    assert messages[0]["text"].startswith("Hi, I'm Wren")
    assert [b["payload"] for b in messages[0]["buttons"]][:1] == ["My internet is down"]
    assert "buttons" not in messages[-1]
    assert set(messages[-1]) == {"recipient_id", "text"}
    assert missing.status_code == 422
    assert stored > 0


def _completion_body(text: str, **extra: object) -> dict[str, object]:
    return {
        "model": "brightwave-support",
        "messages": [
            {"role": "system", "content": "ignored"},
            {"role": "user", "content": "an earlier message, ignored"},
            {"role": "assistant", "content": "ignored"},
            {"role": "user", "content": [{"type": "text", "text": text}]},
        ],
        **extra,
    }


async def test_chat_completions_multi_turn(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE, SET_POSTCODE]) as s:
        first = await s.client.post(
            "/v1/chat/completions",
            json=_completion_body("internet down", user="u-1"),
            headers=ALICE,
        )
        second = await s.client.post(
            "/v1/chat/completions",
            json=_completion_body("LN4 7QP", temperature=0.2),
            headers={**ALICE, "X-Keel-Conversation-Id": "u-1"},
        )
        users = [
            s.event.text for s in await s.store.read("alice/u-1") if s.event.kind == "user_message"
        ]
    body = first.json()
    assert first.status_code == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert body["model"] == "brightwave-support"
    assert body["created"] == 1767225600
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
    parts = choice["message"]["content"].split("\n\n")
    assert parts[0].startswith("Hi, I'm Wren") and parts[-1].startswith("What's the postcode")
    assert body["keel"]["conversation_id"] == "u-1" and body["keel"]["buttons"]
    assert first.headers["x-keel-conversation-id"] == "u-1"
    assert "known fault" in second.json()["choices"][0]["message"]["content"]
    assert users == ["internet down", "LN4 7QP"]


async def test_chat_completions_stream_chunks_then_done(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        r = await s.client.post(
            "/v1/chat/completions",
            json=_completion_body("internet down", stream=True, user="u-2"),
            headers=ALICE,
        )
    assert r.headers["content-type"].startswith("text/event-stream")
    lines = [line for line in r.text.split("\n\n") if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.startswith("Hi, I'm Wren") and text.endswith("internet is down?")


async def test_chat_completions_needs_a_conversation_and_a_user_message(
    serve: ServeFactory,
) -> None:
    async with serve() as s:
        no_id = await s.client.post(
            "/v1/chat/completions", json=_completion_body("hi"), headers=ALICE
        )
        no_user = await s.client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "system", "content": "x"}], "user": "u"},
            headers=ALICE,
        )
        bad_id = await s.client.post(
            "/v1/chat/completions", json=_completion_body("hi", user="a b"), headers=ALICE
        )
        models = await s.client.get("/v1/models", headers=ALICE)
    # No conversation named: a new one, its id in the header and in `keel`.
    assert no_id.status_code == 200, no_id.text
    new_id = no_id.headers["x-keel-conversation-id"]
    assert new_id.startswith("conv_") and no_id.json()["keel"]["conversation_id"] == new_id
    assert no_user.status_code == 422 and bad_id.status_code == 422
    assert models.json() == {
        "object": "list",
        "data": [{"id": "brightwave-support", "object": "model", "created": 0, "owned_by": "keel"}],
    }
