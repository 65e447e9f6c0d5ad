"""End to end: `keel run` in a real uvicorn process, talked to with the official openai SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest
from live_server import live_server, postgres_schema
from server_kit import EXAMPLE, parse_sse

KEY = "sdk-secret"
SCRIPT = """\
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "KEEL_API_KEYS": f"sdk:chat,admin:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'live.db'}",
    }


def test_openai_sdk_holds_a_conversation_streaming_and_not(tmp_path: Path) -> None:
    script = tmp_path / "script.yml"
    script.write_text(SCRIPT, encoding="utf-8")
    args = [str(EXAMPLE), "--model", f"scripted:{script}"]
    with live_server(args, env=_env(tmp_path), cwd=tmp_path) as base:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, max_retries=0)
        models = [m.id for m in client.models.list()]
        history: list[dict[str, str]] = [{"role": "user", "content": "my internet is down"}]
        first = client.chat.completions.create(
            model="brightwave-support",
            messages=history,
            user="sdk-1",  # type: ignore[arg-type]
        )
        history += [
            {"role": "assistant", "content": first.choices[0].message.content or ""},
            {"role": "user", "content": "LN4 7QP"},
        ]
        second = client.chat.completions.create(
            model="brightwave-support",
            messages=history,
            user="sdk-1",  # type: ignore[arg-type]
        )
        streamed = [
            _stream(client, "my internet is down"),
            _stream(client, "LN4 7QP"),
        ]
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}) as http:
            raw = http.post(
                "/v1/conversations/raw-1/messages",
                json={"text": "/session_start"},
                headers={"accept": "text/event-stream"},
            )
            state = http.get("/v1/conversations/sdk-1").json()
            unauthorised = httpx.get(f"{base}/v1/models")
    assert models == ["brightwave-support"]
    assert (first.choices[0].message.content or "").startswith("Hi, I'm Wren")
    assert "postcode" in (first.choices[0].message.content or "")
    assert "known fault" in (second.choices[0].message.content or "")
    assert second.choices[0].finish_reason == "stop"
    (text_1, finish_1), (text_2, finish_2) = streamed
    assert text_1.startswith("Hi, I'm Wren") and text_1.endswith("internet is down?")
    assert "known fault" in text_2 and finish_1 == finish_2 == "stop"
    assert state["memory"]["report_outage.postcode"] == "[set]"
    assert state["turn_count"] == 3
    frames = parse_sse(raw.text)
    assert "content-length" not in raw.headers
    assert [name for _, name, _ in frames] == ["bot_message", "stop", "done"]
    assert unauthorised.status_code == 401


def _stream(client: openai.OpenAI, text: str) -> tuple[str, str | None]:
    stream = client.chat.completions.create(
        model="brightwave-support",
        messages=[{"role": "user", "content": text}],
        stream=True,
        extra_headers={"X-Keel-Conversation-Id": "sdk-2"},
    )
    parts: list[str] = []
    finish: str | None = None
    for chunk in stream:
        choice = chunk.choices[0]
        parts.append(choice.delta.content or "")
        finish = choice.finish_reason or finish
    return "".join(parts), finish


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store URL for the live server: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'workers.db'}"
        return
    with postgres_schema() as url:
        yield url


def test_several_workers_share_one_store(tmp_path: Path, database_url: str) -> None:
    (tmp_path / "empty.yml").write_text("[]\n", encoding="utf-8")
    args = [str(EXAMPLE), "--workers", "2", "--model", f"scripted:{tmp_path / 'empty.yml'}"]
    env = {**_env(tmp_path), "KEEL_DATABASE_URL": database_url}
    with live_server(args, env=env, cwd=tmp_path) as base:
        with httpx.Client(base_url=base, headers={"x-api-key": KEY}, timeout=30) as http:
            answers = [
                http.post(f"/v1/conversations/w-{n}/messages", json={"text": "/session_start"})
                for n in range(6)
            ]
            listing = http.get("/v1/admin/conversations").json()
            if database_url.startswith("postgresql"):
                _one_conversation_at_once(http)
    assert {r.status_code for r in answers} == {200}
    assert {r.json()["messages"][0]["text"].split(",")[0] for r in answers} == {"Hi"}
    owned = sorted(c["conversation_id"] for c in listing["conversations"])
    assert owned == [f"w-{n}" for n in range(6)]
    assert json.dumps(listing).count('"owner": "sdk"') == 6


def _one_conversation_at_once(http: httpx.Client) -> None:
    """Ten simultaneous messages to one conversation: whole turns, one after another."""

    def send(n: int) -> int:
        r = http.post("/v1/conversations/shared/messages", json={"text": f"message {n}"})
        return r.status_code

    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = list(pool.map(send, range(10)))
    events = http.get("/v1/conversations/shared/events").json()["events"]
    assert set(statuses) <= {200, 409} and 200 in statuses
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    open_turns = 0
    for item in events:
        kind = item["event"]["type"]
        open_turns += {"turn_started": 1, "turn_ended": -1}.get(kind, 0)
        assert open_turns in (0, 1), "two turns of one conversation interleaved"
    users = [e["event"]["text"] for e in events if e["event"]["type"] == "user_message"]
    assert len(users) == statuses.count(200)
