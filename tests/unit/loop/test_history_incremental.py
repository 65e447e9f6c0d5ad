"""`keel.loop.history_log.history_of` reads on from the previous call instead of reading the
whole log again: whatever the split between earlier turns and this one, and however the log
grew since, it answers exactly what a whole pass (`read_history`) answers, and it never
changes a message it gave out before (a held call's answer that changes later is a new
message in its place)."""

from __future__ import annotations

import copy
from pathlib import Path

from keel.events.model import Event, TurnStarted
from keel.loop.history import unit_tokens
from keel.loop.history_log import history_of, read_history
from keel.testing import ScriptedModel
from keel.testing.harness import ConversationHarness, make_harness

DESK = Path(__file__).resolve().parents[2] / "models" / "agents" / "desk"


def _call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


async def _held_yes_then_restart() -> ConversationHarness:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {
                "text": "Let me look.",
                "tool_calls": [
                    _call("get_reservation", {"reservation_id": "R1"}),
                    _call("get_reservation", {}),
                    _call("listen", {}),
                ],
            },
            {"tool_calls": [_call("cancel_reservation", {"reservation_id": "R1"})]},
            {"tool_calls": [_call("resolve_tool_confirmation", {"confirmed": True})]},
            "Cancelled.",
            "Bye.",
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            "Hello again.",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("what is on R1? cancel it")
    await harness.send("yes")
    await harness.send("thanks")
    await harness.send("/restart")
    await harness.send("hi")
    return harness


async def _approved_outside() -> ConversationHarness:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {"tool_calls": [_call("cancel_reservation", {"reservation_id": "R2"})]},
            "Done.",
            "Yes.",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("cancel R2")
    pending = harness.state.pending_confirmation
    assert pending is not None
    await harness.engine.resolve_pause(harness.conversation_id, pending.pause_id, True)
    await harness.send("is it done?")
    await harness.send("sure?")
    return harness


def _splits(log: tuple[Event, ...]) -> list[int]:
    """Every turn's start, and a few other indexes (a split the engine never makes)."""
    turns = [i for i, e in enumerate(log) if isinstance(e, TurnStarted)]
    return sorted({*turns, 0, 1, len(log) // 2, len(log)})


def _check(conversation: str, log: tuple[Event, ...], tool_results: bool) -> None:
    given: list[tuple[object, object]] = []
    for start in _splits(log):
        for end in range(start, len(log) + 1):
            current = list(log[start:end])
            found = history_of(conversation, log[:start], current, tool_results=tool_results)
            units, messages = read_history(log[:end], start, tool_results=tool_results)
            assert list(found.earlier) == units, (start, end)
            assert list(found.current) == messages, (start, end)
            assert list(found.messages()) == [m for unit in units for m in unit]
            assert found.sizes(unit_tokens) == tuple(unit_tokens(unit) for unit in units)
            given.append((found.earlier, copy.deepcopy(found.earlier)))
    # Nothing given out was changed by a later call.
    assert all(units == snapshot for units, snapshot in given)


async def test_reading_on_answers_what_a_whole_pass_answers() -> None:
    for made in (await _held_yes_then_restart(), await _approved_outside()):
        log = made.events
        for tool_results in (True, False):
            _check(f"incremental-{id(made)}-{tool_results}", log, tool_results)


async def test_a_log_that_is_not_the_one_read_before_is_read_again() -> None:
    first = (await _held_yes_then_restart()).events
    other = (await _approved_outside()).events
    conversation = "incremental-other-log"
    history_of(conversation, first[:-3], first[-3:], tool_results=True)
    # The same conversation id with other event objects (another engine, a reloaded log).
    found = history_of(conversation, other[:-2], other[-2:], tool_results=True)
    units, messages = read_history(other, len(other) - 2, tool_results=True)
    assert (list(found.earlier), list(found.current)) == (units, messages)
    # A shorter log than the one read (the recorder's events cleared) is read again too.
    found = history_of(conversation, other[:-2], [], tool_results=True)
    units, messages = read_history(other[:-2], len(other) - 2, tool_results=True)
    assert (list(found.earlier), list(found.current)) == (units, messages)
