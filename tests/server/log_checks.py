"""Checks on a conversation's log as `GET /v1/conversations/{id}/events` returns it."""

from __future__ import annotations

from typing import Any

Event = dict[str, Any]
"""One item of the events answer: `{"seq": n, "event": {"type": ..., ...}}`."""

BETWEEN_TURNS = frozenset({"conversation_state_changed", "bot_turn_ended"})
"""What a turn appends after its `turn_ended` (the new state, the end of the bot's turn)."""


def of_type(events: list[Event], kind: str) -> list[Event]:
    """The encoded events of one type, in log order."""
    return [e["event"] for e in events if e["event"]["type"] == kind]


def assert_consistent(events: list[Event], where: str = "") -> None:
    """Sequence numbers 1..N without gaps, and whole turns one after another.

    Each `turn_started` is followed by its own events up to its `turn_ended` before the
    next `turn_started` (no interleaving), every turn is closed, turn ids are unique, and
    outside a turn there is nothing but the closing state change and `bot_turn_ended`.
    """
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(events) + 1)), f"{where}: sequence numbers {seqs}"
    current: str | None = None
    seen: set[str] = set()
    for item in events:
        event = item["event"]
        kind = event["type"]
        if kind == "turn_started":
            assert current is None, f"{where}: turn {event['turn_id']} started inside {current}"
            assert event["turn_id"] not in seen, f"{where}: turn {event['turn_id']} twice"
            current = event["turn_id"]
            seen.add(current)
        elif kind == "turn_ended":
            assert event["turn_id"] == current, f"{where}: seq {item['seq']} ends another turn"
            current = None
        elif current is None:
            assert kind in BETWEEN_TURNS, f"{where}: {kind} at seq {item['seq']} is in no turn"
    assert current is None, f"{where}: turn {current} was never closed"
