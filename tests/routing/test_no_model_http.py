"""Acceptance: the retail agent served with no model (`--model none`) over the HTTP API.

Sign-in by email and by name + zip code, order status, and cancelling a pending order
(order id by pattern, reason from the customer's words, yes at the confirmation) all
complete; what needs a model gets the fixed reply, with the reason in the log.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import retaildb
from routing_kit import RETAIL

from keel.ids import FakeClock, SequentialIds
from keel.server import ServerSettings, create_app
from keel.server.auth import KeyRing, parse_keys

SALT = b"salt"
HEADERS = {"Authorization": "Bearer secret"}
DB = json.loads((RETAIL / "data" / "db.json").read_text(encoding="utf-8"))
# A customer with a pending and a delivered order (found in the data, not hard-coded).
USER = next(
    u
    for u in DB["users"].values()
    if {DB["orders"][o]["status"] for o in u["orders"]} >= {"pending", "delivered"}
)
PENDING = next(o for o in USER["orders"] if DB["orders"][o]["status"] == "pending")
DELIVERED = next(o for o in USER["orders"] if DB["orders"][o]["status"] == "delivered")


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    retaildb.reset()
    settings = ServerSettings(
        project=RETAIL,
        database_url=f"sqlite:///{tmp_path / 'keel.db'}",
        model="none",
        keys=KeyRing(salt=SALT, keys=parse_keys("t:chat,admin:secret", SALT)),
    )
    app = create_app(settings, clock=FakeClock(), ids=SequentialIds("id-"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://keel.test") as client:
            yield client
    retaildb.reset()


async def say(client: httpx.AsyncClient, conversation: str, text: str) -> dict[str, Any]:
    r = await client.post(
        f"/v1/conversations/{conversation}/messages", json={"text": text}, headers=HEADERS
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def texts(body: dict[str, Any]) -> list[str]:
    return [m["text"] for m in body["messages"]]


async def events(client: httpx.AsyncClient, conversation: str) -> list[dict[str, Any]]:
    r = await client.get(f"/v1/conversations/{conversation}/events", headers=HEADERS)
    assert r.status_code == 200, r.text
    body = r.json()
    items = body["events"] if isinstance(body, dict) else body
    return [item["event"] for item in items]


async def test_main_flows_complete_with_no_model(tmp_path: Path) -> None:
    name = f"{USER['name']['first_name']} {USER['name']['last_name']}"
    async with served(tmp_path) as client:
        greeting = await say(client, "c1", "/session_start")
        assert texts(greeting)[0].startswith("Hi, I'm Sol")
        # Routed to sign-in offline; no email yet, so the sign-in question comes again.
        asked = await say(client, "c1", "hi, I have a question about an order")
        assert "email address on it" in texts(asked)[-1]
        signed = await say(client, "c1", f"sure, it is {USER['email']}")
        # Nothing was asked yet, so no "anything else?": what can I do for you.
        assert texts(signed)[-1] == f"You're signed in as {name}. What can I do for you?"
        # Order status: routed, order id found by its pattern, status stated by code.
        status = await say(client, "c1", f"has order {DELIVERED} arrived yet?")
        assert texts(status)[0].startswith(f"Order {DELIVERED} is delivered. It holds")
        # Cancel: order id by pattern, reason from the customer's words, yes to confirm.
        why = await say(client, "c1", f"please cancel order {PENDING}")
        assert texts(why) == [f"Why would you like to cancel order {PENDING}?"]
        ask = await say(client, "c1", "I bought it by accident")
        assert texts(ask)[0].startswith(f"Please confirm: cancel order {PENDING}")
        assert ask["state"] == "paused"
        done = await say(client, "c1", "yes")
        assert texts(done)[0] == f"Order {PENDING} is cancelled, and the refund is on its way."
        assert retaildb.current()["orders"][PENDING]["status"] == "cancelled"
        log = await events(client, "c1")
    routed = [e for e in log if e["type"] == "routing_decided"]
    assert any(e["source"] == "router" and e["skill_id"] == "cancel_order" for e in routed)
    assert not [e for e in log if e["type"] == "model_called"]


async def test_sign_in_by_name_and_zip_and_a_fixed_reply_where_a_model_is_needed(
    tmp_path: Path,
) -> None:
    first, last = USER["name"]["first_name"], USER["name"]["last_name"]
    async with served(tmp_path) as client:
        await say(client, "c2", "/session_start")
        signed = await say(client, "c2", f"I'm {first} {last}, zip {USER['address']['zip']}")
        assert texts(signed)[-1] == f"You're signed in as {first} {last}. What can I do for you?"
        # Unsure between skills: a clarifying question with slash-command buttons.
        unsure = await say(client, "c2", "hmm")
        buttons = unsure["messages"][-1]["buttons"]
        assert buttons and all(b["payload"].startswith("/") for b in buttons)
        # A prose-only skill (product questions) truly needs a model: said plainly at once,
        # with what can be done instead, and logged.
        picked = await say(client, "c2", "/product_info")
        assert "(Product information): it needs an AI model" in texts(picked)[0]
        assert texts(picked)[1] == "Here is what I can do:"
        log = await events(client, "c2")
    ended = [e for e in log if e["type"] == "turn_ended"]
    assert ended[-1]["metadata"]["detail"].startswith("no_model:")
