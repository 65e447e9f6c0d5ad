"""Earlier turns' tool calls and results in the model's history are what the model saw
then (`keel.loop.history_log`), fitted to the budget as whole pairs (`keel.loop.history`).

The fidelity tests play a real conversation (the engine, the desk test agent, a scripted
model) and compare a later request's history with the requests of the earlier turn: the
earlier turn's messages, calls and results come back message for message, including the
framework tools' pairs, refusals (an unknown tool, invalid arguments), a `listen` dropped
for coming with other calls, the reply's text said once, and a held call's answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from keel.llm.port import Message
from keel.loop.history import Unit, fit_history, is_tool_pair
from keel.testing import ScriptedModel
from keel.testing.harness import make_harness

DESK = Path(__file__).resolve().parents[2] / "models" / "agents" / "desk"


def _call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


def _bot(text: str) -> Message:
    return {"role": "assistant", "content": text}


def _pair(call_id: str, result: str) -> Unit:
    call = {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return (
        {"role": "assistant", "content": None, "tool_calls": [call]},  # type: ignore[list-item]
        {"role": "tool", "tool_call_id": call_id, "content": result},
    )


def test_no_budget_keeps_everything() -> None:
    units = [(_user(f"u{i}"),) for i in range(200)] + [_pair("c1", "r")]
    fitted = fit_history(units, fixed_tokens=10, budget=None)
    assert fitted.dropped == 0
    assert len(fitted.messages) == 202


def test_a_pair_goes_whole_when_only_its_result_would_fit() -> None:
    pair = _pair("c1", "x" * 400)
    last = (_bot("done"),)
    result_and_last = fit_history([pair[1:], last], fixed_tokens=0, budget=None).tokens_after
    fitted = fit_history([(_user("hi"),), pair, last], fixed_tokens=0, budget=result_and_last)
    # The tool message alone (with the last reply) would fit; its call would not: both go.
    assert fitted.messages == last
    assert (fitted.dropped, fitted.dropped_tool_pairs, fitted.dropped_tool_results) == (3, 1, 1)
    assert not any(is_tool_pair((m,)) or m["role"] == "tool" for m in fitted.messages)


def test_units_are_dropped_oldest_first_and_contiguously() -> None:
    units = [(_user("old"),), _pair("c1", "a" * 40), (_user("small"),), (_bot("new"),)]
    newest = fit_history(units[2:], fixed_tokens=0, budget=None).tokens_after
    fitted = fit_history(units, fixed_tokens=0, budget=newest + 3)
    # "old" would still fit in the 3 tokens left, but not after a gap: it goes too.
    assert fitted.messages == (_user("small"), _bot("new"))
    assert fitted.dropped_tool_pairs == 1


def _earlier(request_messages: tuple[Message, ...]) -> list[Message]:
    """The history part of a request: after the system prompt, before this turn's user."""
    messages = list(request_messages[1:])
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[:last_user]


async def test_an_earlier_turn_comes_back_as_the_model_saw_it() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {
                "text": "Let me look.",
                "tool_calls": [
                    _call("get_reservation", {"reservation_id": "R1"}),
                    _call("get_reservation", {}),
                    _call("no_such_tool", {}),
                    _call("listen", {}),
                ],
            },
            "R1 is flight LIS-42.",
            "Anything else?",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("what is on R1?")
    await harness.send("thanks")

    first_turn_last_call, second_turn = script.requests[2], script.requests[3]
    # What the model saw then, without the request's closing context (step, memory, clock),
    # which is rebuilt for every request and never kept as history.
    then = [m for m in first_turn_last_call.messages[1:] if m["role"] != "system"]
    seen_then = [*then, _bot("R1 is flight LIS-42.")]
    assert _earlier(second_turn.messages) == seen_then
    tool_texts = [m["content"] for m in seen_then if m["role"] == "tool"]
    assert tool_texts[0] == "activate: done"
    assert "RESULT-OF-R1" in str(tool_texts[1])
    assert str(tool_texts[2]).startswith("Invalid arguments for tool 'get_reservation'")
    assert tool_texts[3] == "Error (tool.not_offered): there is no tool named no_such_tool here"
    calls = [m for m in seen_then if m["role"] == "assistant" and m.get("tool_calls")]
    assert [c["function"]["name"] for c in calls[1].get("tool_calls", [])] == [
        "get_reservation",
        "get_reservation",
        "no_such_tool",
    ]  # the dropped listen is not there, as it was not then
    assert calls[1]["content"] == "Let me look."
    assert _bot("Let me look.") not in seen_then  # said once, with its calls


async def test_a_held_call_reads_as_asked_then_as_resolved() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {"tool_calls": [_call("cancel_reservation", {"reservation_id": "R1"})]},
            {"tool_calls": [_call("resolve_tool_confirmation", {"confirmed": True})]},
            "Cancelled.",
            "Bye.",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("cancel R1")  # the turn ends paused, right after the held call
    await harness.send("yes")
    await harness.send("thanks")

    asked = "Cancel reservation R1? Please answer yes or no."
    waiting = json.dumps({"status": "awaiting_confirmation", "message": asked})
    first_of_yes = _earlier(script.requests[2].messages)
    assert first_of_yes[-2:] == [
        {
            "role": "tool",
            "tool_call_id": first_of_yes[-3]["tool_calls"][0]["id"],
            "content": waiting,
        },  # type: ignore[typeddict-item]
        _bot(asked),
    ]
    later = _earlier(script.requests[4].messages)
    resolved = json.dumps({"status": "resolved", "asked": asked, "outcome": "approved"})
    assert resolved in [m["content"] for m in later if m["role"] == "tool"]
    assert waiting not in [m["content"] for m in later]
    resolve_results = [
        m["content"] for m in later if m["role"] == "tool" and "cancelled" in str(m["content"])
    ]
    assert resolve_results == [json.dumps({"reservation_id": "R1", "status": "cancelled"})]


async def test_a_held_call_approved_outside_the_chat_reads_with_its_result() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {"tool_calls": [_call("cancel_reservation", {"reservation_id": "R2"})]},
            "Done.",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("cancel R2")
    pending = harness.state.pending_confirmation
    assert pending is not None
    await harness.engine.resolve_pause(harness.conversation_id, pending.pause_id, True)
    await harness.send("is it done?")

    asked = "Cancel reservation R2? Please answer yes or no."
    ran = json.dumps({"reservation_id": "R2", "status": "cancelled"})
    resolved = {"status": "resolved", "asked": asked, "outcome": "approved", "result": ran}
    later = _earlier(script.requests[2].messages)
    assert json.dumps(resolved) in [m["content"] for m in later if m["role"] == "tool"]


async def test_a_declined_held_call_reads_as_declined() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [_call("activate", {"target_id": "reservations"})]},
            {"tool_calls": [_call("cancel_reservation", {"reservation_id": "R3"})]},
            "Kept.",
        ]
    )
    harness = make_harness(DESK, script)
    await harness.send("cancel R3")
    pending = harness.state.pending_confirmation
    assert pending is not None
    await harness.engine.resolve_pause(harness.conversation_id, pending.pause_id, False)
    await harness.send("so?")

    asked = "Cancel reservation R3? Please answer yes or no."
    declined = json.dumps({"status": "resolved", "asked": asked, "outcome": "declined"})
    later = _earlier(script.requests[2].messages)
    assert declined in [m["content"] for m in later if m["role"] == "tool"]
