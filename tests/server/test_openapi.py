"""The served OpenAPI schema, and a property-based run against it: no input gives a 5xx."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from server_kit import ALICE, ROOT_KEY, ServeFactory, serving

from keel.server.wire import CONVERSATION_ID_PATTERN
from keel.testing.scripted import ScriptedModel

OPERATIONS = {
    ("post", "/v1/conversations/{conversation_id}/messages"),
    ("get", "/v1/conversations/{conversation_id}"),
    ("get", "/v1/conversations/{conversation_id}/events"),
    ("get", "/v1/conversations/{conversation_id}/stream"),
    ("post", "/v1/conversations/{conversation_id}/approvals/{pause_id}"),
    ("post", "/v1/conversations/{conversation_id}/cancel"),
    ("post", "/v1/conversations/{conversation_id}/turns/{turn_id}/feedback"),
    ("post", "/webhooks/rest/webhook"),
    ("post", "/v1/voice/twilio/incoming"),
    ("post", "/v1/chat/completions"),
    ("post", "/v1/responses"),
    ("get", "/v1/models"),
    ("get", "/v1/admin/conversations"),
    ("get", "/v1/admin/conversations/{owner}/{conversation_id}/events"),
    ("get", "/v1/admin/conversations/{owner}/{conversation_id}/state"),
    ("get", "/v1/admin/conversations/{owner}/{conversation_id}/graph"),
    ("get", "/v1/admin/conversations/{owner}/{conversation_id}/stream"),
    ("get", "/v1/admin/plans"),
    ("get", "/v1/admin/plans/{entry_id}"),
    ("delete", "/v1/admin/plans/{entry_id}"),
    ("post", "/v1/admin/plans/flush"),
    ("get", "/v1/admin/plans/observations"),
    ("get", "/v1/admin/plans/anti"),
    ("post", "/v1/admin/plans/maintain"),
    ("get", "/health"),
    ("get", "/metrics"),
}


async def test_openapi_is_served_and_lists_every_endpoint(serve: ServeFactory) -> None:
    async with serve() as s:
        schema = (await s.client.get("/openapi.json")).json()
        docs = await s.client.get("/docs")
    listed = {(m, p) for p, ops in schema["paths"].items() for m in ops}
    assert listed == OPERATIONS
    assert set(schema["components"]["securitySchemes"]) == {"HTTPBearer", "APIKeyHeader"}
    messages = schema["paths"]["/v1/conversations/{conversation_id}/messages"]["post"]
    assert "text/event-stream" in messages["responses"]["200"]["content"]
    assert messages["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ErrorReply"
    )
    assert docs.status_code == 200


def test_docs_api_md_describes_every_endpoint() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    for method, path in OPERATIONS:
        shown = path.replace("{conversation_id}", "{id}")
        assert f"{method.upper()} {shown}" in text, f"docs/api.md does not describe {method} {path}"


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
VALID_ID = st.from_regex(CONVERSATION_ID_PATTERN, fullmatch=True)
OWNERS = ["alice", "bob", "~", "a b"]
"""Owners in admin paths: alice chats below, bob never does, `~` and `a b` own nothing."""
IDS = st.one_of(VALID_ID, VALID_ID, st.sampled_from(["c1", "c2"]), st.text(max_size=12))
TEXT = st.text(min_size=1, max_size=30)
CHAT = st.fixed_dictionaries(
    {
        "model": st.text(max_size=5),
        "messages": st.lists(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "system"]), "content": TEXT | JSON}
            ),
            max_size=3,
        ),
    },
    optional={"stream": st.booleans(), "user": IDS},
)
BODY_FOR = {
    "/messages": st.fixed_dictionaries({"text": TEXT}, optional={"metadata": JSON}),
    "/approvals/": st.fixed_dictionaries({"approved": st.booleans() | JSON}),
    "/webhook": st.fixed_dictionaries(
        {"sender": IDS, "message": TEXT}, optional={"metadata": JSON}
    ),
    "/completions": CHAT,
    "/flush": st.fixed_dictionaries({"layer": st.sampled_from(["l0", "l1", "all", "l2"])}),
    "/feedback": st.fixed_dictionaries(
        {"signal": st.sampled_from(["approve", "reject", "repeat", "love"])}
    ),
}


def _body(path: str) -> st.SearchStrategy[object]:
    for part, strategy in BODY_FOR.items():
        if part in path:
            return st.one_of(strategy, strategy, strategy, JSON)
    return JSON


@st.composite
def requests(draw: st.DrawFn) -> dict[str, object]:
    method, template = draw(st.sampled_from(sorted(OPERATIONS)))
    path = template
    for name in ("conversation_id", "pause_id", "entry_id", "turn_id"):
        path = path.replace("{" + name + "}", quote(draw(IDS) or "x", safe=""))
    # The admin stream follows a conversation until the client leaves, and this client
    # reads whole answers: it only asks for conversations that do not exist.
    owners = OWNERS if not template.endswith("/stream") else OWNERS[1:]
    path = path.replace("{owner}", quote(draw(st.sampled_from(owners)), safe=""))
    headers = dict(draw(st.sampled_from([ALICE, ALICE, ALICE, ROOT_KEY, {}])))
    if draw(st.booleans()):
        headers["accept"] = "text/event-stream"
    if draw(st.booleans()):
        headers["last-event-id"] = draw(st.text(alphabet="0123456789-x ", max_size=25))
    params = draw(
        st.dictionaries(
            st.sampled_from(["after", "limit", "owner", "seq"]), st.text(max_size=25), max_size=2
        )
    )
    body = draw(_body(template))
    return {"method": method, "url": path, "headers": headers, "params": params, "json": body}


def test_no_request_makes_the_server_fail(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()
    context = serving(tmp_path, ScriptedModel([]))
    served = loop.run_until_complete(context.__aenter__())

    @settings(
        max_examples=120,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(request=requests())
    def check(request: dict[str, object]) -> None:
        method = str(request.pop("method"))
        answer = loop.run_until_complete(served.client.request(method, **request))  # type: ignore[arg-type]
        assert answer.status_code < 500, (method, request, answer.text)
        if answer.status_code >= 400 and answer.status_code != 405:
            assert set(answer.json()["error"]) >= {"code", "message", "type"}

    try:
        check()
    finally:
        loop.run_until_complete(context.__aexit__(None, None, None))
        loop.close()
