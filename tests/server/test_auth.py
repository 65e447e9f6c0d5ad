"""API keys, scopes, ownership and the rate limit."""

from __future__ import annotations

import hashlib

import pytest
from server_kit import ACTIVATE_OUTAGE, ALICE, BOB, ROOT_KEY, ServeFactory

from keel.ids import FakeClock
from keel.server.auth import KeyConfigError, KeyRing, parse_keys
from keel.server.ratelimit import RateLimit, RateLimiter, retry_after_header

# --- keys ------------------------------------------------------------------------------


def test_keys_are_kept_as_salted_digests_and_verified() -> None:
    keys = parse_keys("web:chat:s3cret; ops:chat,admin:other # comment\n\n", b"salt")
    ring = KeyRing(salt=b"salt", keys=keys)
    assert [(k.name, sorted(k.scopes)) for k in keys] == [
        ("web", ["chat"]),
        ("ops", ["admin", "chat"]),
    ]
    assert keys[0].digest == hashlib.sha256(b"salts3cret").hexdigest()
    assert "s3cret" not in repr(keys)
    assert ring.verify("s3cret") is keys[0]
    assert ring.verify("other") is keys[1]
    assert ring.verify("s3cre") is None
    assert KeyRing(salt=b"pepper", keys=keys).verify("s3cret") is None


def test_digest_entries_need_the_configured_salt() -> None:
    digest = hashlib.sha256(b"pepper" + b"k1").hexdigest()
    keys = parse_keys(f"svc:chat:sha256:{digest}", b"pepper", salt_configured=True)
    assert KeyRing(salt=b"pepper", keys=keys).verify("k1") is keys[0]
    with pytest.raises(KeyConfigError, match="KEEL_API_KEY_SALT"):
        parse_keys(f"svc:chat:sha256:{digest}", b"random")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nokey", "name:scope1"),
        ("web:chat:", "name:scope1"),
        ("bad name:chat:k", "must be 1-64"),
        ("web:root:k", "scopes must be among"),
        ("web::k", "scopes must be among"),
        ("web:chat:a\nweb:chat:b", "configured twice"),
    ],
)
def test_bad_key_entries_are_refused_without_echoing_secrets(spec: str, message: str) -> None:
    with pytest.raises(KeyConfigError, match=message) as caught:
        parse_keys(spec, b"s")
    assert ":k" not in str(caught.value).replace("name:scope1,scope2:key", "")


SECRET = "TOPSECRET888"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (SECRET, "KEEL_API_KEYS entry 1 is not name:scope1,scope2:key"),
        (f"web:chat:ok; {SECRET}", "KEEL_API_KEYS entry 2 is not name:scope1,scope2:key"),
        (f"chat:{SECRET}", "entry 1 is not name:scope1,scope2:key"),
        (f"web:{SECRET}:chat", "entry 1 [(]key 'web'[)]: scopes must be among chat, admin"),
        (f"{SECRET}/x=:chat:k", "entry 1: the key name must be 1-64 of"),
        (f"web:chat:sha256:{'0' * 64}\n{SECRET}", "entry 2 is not"),
    ],
)
def test_key_errors_name_the_entry_and_never_show_it(text: str, message: str) -> None:
    with pytest.raises(KeyConfigError, match=message) as caught:
        parse_keys(text, b"s", salt_configured=True, source="KEEL_API_KEYS")
    assert SECRET not in str(caught.value)


async def test_requests_without_a_valid_key_get_401(serve: ServeFactory) -> None:
    async with serve() as s:
        missing = await s.client.get("/v1/models")
        wrong = await s.client.get("/v1/models", headers={"Authorization": "Bearer nope"})
        header = await s.client.get("/v1/models", headers=BOB)
        health = await s.client.get("/health")
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "auth.missing_key"
    assert missing.headers["www-authenticate"] == "Bearer"
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "auth.invalid_key"
    assert wrong.json()["error"]["type"] == "authentication_error"
    assert header.status_code == 200
    assert health.json() == {"status": "ok", "agent": "brightwave-support"}


async def test_scopes_guard_chat_and_admin_endpoints(serve: ServeFactory) -> None:
    async with serve() as s:
        admin_chats = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "hi"}, headers=ROOT_KEY
        )
        chat_admins = await s.client.get("/v1/admin/conversations", headers=ALICE)
        admin_admins = await s.client.get("/v1/admin/conversations", headers=ROOT_KEY)
    for r in (admin_chats, chat_admins):
        assert r.status_code == 403
        assert r.json()["error"]["code"] == "auth.scope"
    assert admin_admins.status_code == 200


async def test_a_key_sees_only_its_own_conversations(serve: ServeFactory) -> None:
    async with serve([ACTIVATE_OUTAGE]) as s:
        await s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
        await s.client.post(
            "/v1/conversations/b1/messages", json={"text": "/session_start"}, headers=BOB
        )
        bob_reads = await s.client.get("/v1/conversations/c1", headers=BOB)
        bob_events = await s.client.get("/v1/conversations/c1/events", headers=BOB)
        alice_reads = await s.client.get("/v1/conversations/c1", headers=ALICE)
        listing = (await s.client.get("/v1/admin/conversations", headers=ROOT_KEY)).json()
        only_bob = await s.client.get("/v1/admin/conversations?owner=bob", headers=ROOT_KEY)
        stored = [c.conversation_id for c in await s.store.list_conversations()]
    assert bob_reads.status_code == 404 and bob_events.status_code == 404
    assert alice_reads.status_code == 200
    assert sorted(stored) == ["alice/c1", "bob/b1"]
    assert sorted((c["owner"], c["conversation_id"]) for c in listing["conversations"]) == [
        ("alice", "c1"),
        ("bob", "b1"),
    ]
    assert [c["conversation_id"] for c in only_bob.json()["conversations"]] == ["b1"]


# --- rate limit ------------------------------------------------------------------------


def test_token_bucket_refills_on_the_injected_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit.parse("2/second"), clock)
    assert limiter.take("k") is None and limiter.take("k") is None
    wait = limiter.take("k")
    assert wait == pytest.approx(0.5)
    assert limiter.take("other") is None
    clock.advance(0.5)
    assert limiter.take("k") is None
    assert limiter.take("k") is not None
    assert retry_after_header(0.2) == "1" and retry_after_header(2.5) == "3"


def test_rate_limit_spec() -> None:
    assert RateLimit.parse("60/minute") == RateLimit(burst=60, per_second=1.0)
    assert not RateLimit.parse("off").enabled
    with pytest.raises(ValueError, match="60/minute"):
        RateLimit.parse("fast")


async def test_rate_limited_key_gets_429_with_retry_after(serve: ServeFactory) -> None:
    async with serve(rate_limit=RateLimit.parse("2/minute")) as s:
        ok = [await s.client.get("/v1/models", headers=ALICE) for _ in range(2)]
        limited = await s.client.get("/v1/models", headers=ALICE)
        other = await s.client.get("/v1/models", headers=BOB)
        s.clock.advance(30)
        refilled = await s.client.get("/v1/models", headers=ALICE)
    assert [r.status_code for r in ok] == [200, 200]
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"
    assert limited.headers["retry-after"] == "30"
    assert other.status_code == 200
    assert refilled.status_code == 200
