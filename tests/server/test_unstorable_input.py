"""Request input the log cannot hold is refused with 422, and nothing is left running.

Channel metadata is stored in the log (the session start memory), so it must be a JSON
value every store can write: finite numbers only, at most `METADATA_MAX_DEPTH` levels of
arrays and objects, strings and keys that are valid UTF-8 (no lone surrogates). Each
route that takes a user message or metadata answers 422 `request.invalid` before any
turn starts, on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_server import postgres_schema
from server_kit import ALICE, EXAMPLE, ServeFactory

from keel.events.base import NotJsonValue
from keel.events.fold import SESSION_METADATA_KEY, fold
from keel.ids import FakeClock, SequentialIds
from keel.loop.engine import Engine
from keel.project.load import load_project
from keel.server.wire import METADATA_MAX_DEPTH
from keel.stores.sqlite import SqliteEventStore
from keel.testing.scripted import ScriptedModel

JSON = {**ALICE, "content-type": "application/json"}


def nested(depth: int) -> str:
    """A JSON object `depth` levels deep: {"a": {"a": ... 1}}."""
    return '{"a": ' * (depth - 1) + '{"a": 1' + "}" * depth


UNSTORABLE = {
    "nan": '{"x": NaN}',
    "infinity": '{"x": [1, -Infinity]}',
    "too_deep": nested(METADATA_MAX_DEPTH + 1),
    "surrogate_value": '{"x": "caf\\ud800"}',
    "surrogate_key": '{"\\udfff": "x"}',
}


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store of each backend (PostgreSQL skipped unless KEEL_REQUIRE_POSTGRES=1)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'keel.db'}"
        return
    with postgres_schema() as url:
        yield url


@pytest.mark.parametrize("metadata", UNSTORABLE.values(), ids=UNSTORABLE.keys())
async def test_unstorable_metadata_is_422_and_nothing_is_written(
    serve: ServeFactory, database_url: str, metadata: str
) -> None:
    async with serve(["hello"], database_url=database_url) as s:
        message = await s.client.post(
            "/v1/conversations/c1/messages",
            content=f'{{"text": "hi", "metadata": {metadata}}}',
            headers=JSON,
        )
        webhook = await s.client.post(
            "/webhooks/rest/webhook",
            content=f'{{"sender": "c2", "message": "hi", "metadata": {metadata}}}',
            headers=JSON,
        )
        logs = [await s.store.read("alice/c1"), await s.store.read("alice/c2")]
    for answer in (message, webhook):
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["code"] == "request.invalid"
        assert error["details"][0]["loc"][:2] == ["body", "metadata"]
        assert error["message"].startswith("body.metadata: ")
    assert logs == [[], []]


@pytest.mark.parametrize(
    "body",
    [f'{{"text": "hi", "metadata": {nested(5_000)}}}'.encode(), b'{"text": "caf\xe9"}'],
    ids=["too_deep_to_parse", "not_utf8"],
)
async def test_a_body_the_json_parser_refuses_is_422(serve: ServeFactory, body: bytes) -> None:
    async with serve(["hello"]) as s:
        r = await s.client.post("/v1/conversations/c1/messages", content=body, headers=JSON)
        log = await s.store.read("alice/c1")
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "request.invalid"
    assert error["details"][0]["loc"] == ["body"]
    assert log == []


async def test_metadata_at_the_depth_limit_is_accepted(serve: ServeFactory) -> None:
    async with serve(["hello"]) as s:
        r = await s.client.post(
            "/v1/conversations/c1/messages",
            content=f'{{"text": "hi", "metadata": {nested(METADATA_MAX_DEPTH)}}}',
            headers=JSON,
        )
        state = fold(item.event for item in await s.store.read("alice/c1"))
    assert r.status_code == 200, r.text
    assert state.status == "idle"
    assert SESSION_METADATA_KEY in state.memory


SURROGATE_TEXTS = {
    "message": ("/v1/conversations/c1/messages", '{"text": "caf\\ud800"}'),
    "webhook": ("/webhooks/rest/webhook", '{"sender": "c1", "message": "caf\\ud800"}'),
    "openai_text": (
        "/v1/chat/completions",
        '{"model": "m", "user": "c1", "messages": [{"role": "user", "content": "caf\\ud800"}]}',
    ),
    "openai_parts": (
        "/v1/chat/completions",
        '{"model": "m", "user": "c1", "messages": [{"role": "user", "content": '
        '[{"type": "text", "text": "caf\\udc00"}]}]}',
    ),
}


@pytest.mark.parametrize("route", SURROGATE_TEXTS.values(), ids=SURROGATE_TEXTS.keys())
async def test_a_user_text_with_a_lone_surrogate_is_422(
    serve: ServeFactory, database_url: str, route: tuple[str, str]
) -> None:
    path, body = route
    async with serve(["hello"], database_url=database_url) as s:
        r = await s.client.post(path, content=body, headers=JSON)
        log = await s.store.read("alice/c1")
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "request.invalid"
    assert log == []


async def test_engine_refusing_metadata_leaves_no_turn_running(tmp_path: Path) -> None:
    """Below the HTTP layer too: a session start whose metadata cannot be stored appends
    nothing, so the conversation never reads `running`."""
    definition, _ = load_project(EXAMPLE)
    assert definition is not None
    store = await SqliteEventStore.open(tmp_path / "keel.db")
    try:
        engine = Engine(
            definition=definition,
            store=store,
            model=ScriptedModel(["hello"]),
            clock=FakeClock(),
            ids=SequentialIds("id-"),
        )
        with pytest.raises(NotJsonValue, match="not a finite number"):
            await engine.handle("c1", "hi", metadata={"x": float("nan")})
        state = fold(item.event for item in await store.read("c1"))
    finally:
        await store.close()
    assert state.status != "running"
    assert state.current_turn_id is None


def test_the_depth_limit_is_documented() -> None:
    api = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    assert f"{METADATA_MAX_DEPTH} levels" in api
    assert json.loads(nested(3)) == {"a": {"a": {"a": 1}}}
