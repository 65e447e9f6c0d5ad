"""No unfilled placeholder reaches a user: a response whose placeholder has no value is not
sent as written. Its fallback (the next variant that fits and fills) is sent instead, else
`utter_internal_error`; the message sent records the withheld response in
`metadata.withheld` (code `response.placeholder.unfilled`).

The library agent under `placeholder_agent/` renews a book behind a confirmation and then
utters the new due date with no `next:` branch: after a denial that date has no value.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from keel.events.model import BotMessage, Event
from keel.llm.none import NoModel
from keel.stores.factory import open_store
from keel.stores.port import EventStore
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).parent / "placeholder_agent"
INTERNAL_ERROR = "Something went wrong on my side. Please try again."
UNFILLED = "response.placeholder.unfilled"


def _call(name: str, **args: object) -> dict[str, object]:
    return {"text": None, "tool_calls": [{"name": name, "arguments": args}]}


def _messages(events: tuple[Event, ...]) -> list[BotMessage]:
    return [e for e in events if isinstance(e, BotMessage)]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await open_store(f"sqlite:///{tmp_path / 'keel.db'}")
    yield opened
    await opened.close()


def _harness(store: EventStore, model: object) -> ConversationHarness:
    return ConversationHarness(AGENT, model, store=store)  # type: ignore[arg-type]


async def _asked(store: EventStore, book: str, *replies: object) -> ConversationHarness:
    """`/renewal`, the book named, and the renewal asked for (the turn paused)."""
    model = ScriptedModel([_call("set_fields", fields={"book": book}), *replies])  # type: ignore[list-item]
    harness = _harness(store, model)
    await harness.send("/renewal")
    await harness.send(book)
    assert harness.state.status == "paused"
    assert harness.bot_texts[-1] == f"Renew {book} for two more weeks?"
    return harness


async def test_a_block_action_after_a_denial_is_not_sent_unfilled(store: EventStore) -> None:
    harness = await _asked(
        store, "Dune", _call("resolve_tool_confirmation", confirmed=False), "You're welcome."
    )
    denied = await harness.send("no")
    assert [m.text for m in _messages(denied.events)] == ["OK, I left Dune as it is."]
    later = await harness.send("thanks")
    sent = _messages(later.events)
    assert all("{" not in m.text for m in sent), [m.text for m in sent]
    # The block's last step, then the message answered (the turn after a denial).
    assert [m.text for m in sent][1:] == ["You're welcome."]
    assert later.state.last_stop_reason == "end_turn"
    replaced = sent[0]
    assert replaced.text == INTERNAL_ERROR
    assert replaced.utter_action == "utter_internal_error"
    assert replaced.metadata["withheld"] == {
        "code": UNFILLED,
        "response": "utter_renewed",
        "placeholders": ("{new_due_date}",),
    }


async def test_an_approved_renewal_fills_every_placeholder(store: EventStore) -> None:
    harness = await _asked(store, "Dune", _call("resolve_tool_confirmation", confirmed=True))
    approved = await harness.send("yes")
    sent = _messages(approved.events)
    assert [m.text for m in sent][:2] == ["Renewal saved.", "Done! Dune is due on 2026-02-01."]
    assert not any("withheld" in m.metadata for m in sent)


async def test_on_failure_falls_back_to_the_variant_that_fills(store: EventStore) -> None:
    harness = await _asked(store, "Lost", _call("resolve_tool_confirmation", confirmed=True))
    failed = await harness.send("yes")
    sent = _messages(failed.events)
    fallback = next(m for m in sent if m.utter_action == "utter_renewal_failed")
    assert fallback.text == "Sorry, that book could not be renewed."
    assert fallback.metadata["withheld"] == {
        "code": UNFILLED,
        "response": "utter_renewal_failed",
        "placeholders": ("{new_due_date}",),
    }
    assert all("{" not in m.text for m in sent), [m.text for m in sent]


async def test_a_no_model_reply_is_not_sent_unfilled(store: EventStore) -> None:
    harness = _harness(store, NoModel())
    # A button whose payload breaks the grammar is read as its title: with no model, only
    # the fixed reply can answer it.
    result = await harness.send("set:oops", metadata={"button_title": "Help me"})
    # The fixed reply first (then what the agent can do without a model, its own message).
    reply = _messages(result.events)[0]
    assert reply.text == INTERNAL_ERROR
    assert reply.metadata["withheld"]["response"] == "utter_needs_model"  # type: ignore[index]
