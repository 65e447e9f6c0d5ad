"""bench/fidelity's per-call comparison on hand-made requests (pure, no server)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "fidelity"))

from metrics import (  # noqa: E402
    compare_call,
    fed_results,
    first_difference,
    prefix_share,
    serialise,
)

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "lookup", "description": "", "parameters": {}}}
]


def call(number: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"c{number}",
                "type": "function",
                "function": {"name": "lookup", "arguments": "{}"},
            }
        ],
    }


def result(number: int, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{number}", "content": content}


# gpt-4o's context: turn 0 looked up A (recorded with the old `province` key), turn 1 looks
# up B and is about to reply.
RECORDED = [
    {"role": "system", "content": "policy"},
    {"role": "user", "content": "first"},
    call(1),
    result(1, '{"id": "A", "province": "NY"}'),
    {"role": "assistant", "content": "Found A."},
    {"role": "user", "content": "second"},
    call(2),
    result(2, '{"id": "B"}'),
]


def keel_body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "system", "content": "keel"}, *messages], "tools": TOOLS}


def test_an_earlier_turn_result_counts_only_when_keel_carries_it() -> None:
    current_turn = (
        {"role": "user", "content": "second"},
        call(2),
        result(2, '{"id": "B"}'),
    )
    without = compare_call(
        RECORDED,
        TOOLS,
        keel_body(
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "Found A."},
            *current_turn,
        ),
    )
    assert (without.earlier_results, without.earlier_present) == (1, 0)
    assert (without.current_results, without.current_present) == (1, 1)
    assert (without.user_texts, without.user_present) == (2, 2)
    assert (without.bot_texts, without.bot_present) == (1, 1)

    carried = compare_call(
        RECORDED,
        TOOLS,
        keel_body(
            {"role": "user", "content": "first"},
            call(1),
            result(1, '{"id": "A", "state": "NY"}'),  # db.json's key for the recorded one
            {"role": "assistant", "content": "Found A."},
            *current_turn,
        ),
    )
    assert (carried.earlier_results, carried.earlier_present) == (1, 1)


def test_a_result_fetched_again_this_turn_does_not_stand_for_the_earlier_one() -> None:
    recorded = [*RECORDED[:6], call(2), result(2, '{"id": "A", "province": "NY"}')]
    body = keel_body(
        {"role": "user", "content": "second"}, call(2), result(2, '{"id": "A", "state": "NY"}')
    )
    compared = compare_call(recorded, TOOLS, body)
    assert (compared.current_results, compared.current_present) == (1, 1)
    assert (compared.earlier_results, compared.earlier_present) == (1, 0)
    assert (compared.user_texts, compared.user_present) == (2, 1)


def test_the_prefix_share_and_where_requests_first_differ() -> None:
    first = serialise([{"role": "system", "content": "now 10:00"}], TOOLS)
    later = serialise([{"role": "system", "content": "now 10:03"}], TOOLS)
    assert first_difference(first, later) == "system"
    assert 0.0 < prefix_share(first.text, later.text) < 0.5
    grown = serialise(
        [{"role": "system", "content": "now 10:00"}, {"role": "user", "content": "hi"}], TOOLS
    )
    assert first_difference(first, grown) == "messages"
    assert prefix_share(first.text, grown.text) == len(first.text) / len(grown.text)
    assert prefix_share(first.text, first.text) == 1.0


def test_an_earlier_result_is_looked_for_as_keel_served_it() -> None:
    # Keel's tool answered turn 0's call otherwise than recorded (a policy refusal, say).
    refused = "Error: policy.sign_in"
    first_call = keel_body({"role": "user", "content": "first"}, call(1), result(1, refused))
    served = fed_results(RECORDED[:4], first_call)
    assert served == {3: refused}
    later = keel_body(
        {"role": "user", "content": "first"},
        call(1),
        result(1, refused),
        {"role": "assistant", "content": "Found A."},
        {"role": "user", "content": "second"},
        call(2),
        result(2, '{"id": "B"}'),
    )
    as_served = compare_call(RECORDED, TOOLS, later, served)
    assert (as_served.earlier_results, as_served.earlier_present) == (1, 1)
    as_recorded = compare_call(RECORDED, TOOLS, later)
    assert (as_recorded.earlier_results, as_recorded.earlier_present) == (1, 0)
    assert as_served.current_as_recorded == 1
