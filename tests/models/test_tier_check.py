"""The `tier:` request check of conversation tests: parsing, diagnostics, the pure check and
a run where it fails with a readable reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tiered_harness import make_tiered_harness

from keel.events.fold import ConversationState
from keel.llm import ModelRequest, user_message
from keel.testing.conversation import Observation, check_one, run_test_file
from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.spec import AssertStep, RequestCheck

TIERS_AGENT = Path(__file__).resolve().parent / "agents" / "tiers"


def _file(folder: Path, steps: str) -> Path:
    path = folder / "t.yml"
    body = textwrap.indent(textwrap.dedent(steps), " " * 6)
    path.write_text(
        f"agent: {TIERS_AGENT.as_posix()}\ntests:\n  - name: t\n    steps:\n{body}",
        encoding="utf-8",
    )
    return path


def _observation(*tiers: str) -> Observation:
    requests = tuple(ModelRequest(messages=(user_message("hi"),), tier=t) for t in tiers)
    return Observation(events=(), state=ConversationState(), requests=requests)


def test_tier_parses_at_the_top_and_under_request(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        - assert:
            tier: reasoning
            request: {number: 1, tier: router, offered_tools: [activate]}
        """,
    )
    parsed, diagnostics = parse_test_file(path)
    assert diagnostics == [] and parsed is not None
    (step,) = parsed.cases[0].steps
    assert isinstance(step, AssertStep)
    assert step.checks == (
        RequestCheck(tier="reasoning"),
        RequestCheck(number=1, tier="router", offered=("activate",)),
    )


def test_a_malformed_tier_is_a_diagnostic(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        - assert: {tier: [router]}
        - assert: {request: {tier: ""}}
        - assert: {request: {tier: 3}}
        """,
    )
    _, diagnostics = parse_test_file(path)
    assert [(d.code, d.line) for d in diagnostics] == [
        ("test.assert.request", 5),
        ("test.assert.request", 6),
        ("test.assert.request", 7),
    ]
    assert "tier takes a tier name" in diagnostics[0].message


def test_the_tier_check_compares_the_request_tier() -> None:
    observation = _observation("router", "reasoning")
    assert check_one(RequestCheck(tier="reasoning"), observation) is None
    assert check_one(RequestCheck(number=1, tier="router"), observation) is None
    assert check_one(RequestCheck(number=1, tier="default"), observation) == (
        "model request 1: tier 'router', expected 'default'"
    )
    assert check_one(RequestCheck(number=3, tier="router"), observation) == (
        "model request 3: the scripted model received only 2 request(s)"
    )


def test_a_wrong_tier_fails_the_test_with_the_actual_tier(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        - model:
            - tool_calls: [{name: activate, arguments: {target_id: planner}}]
            - Hello.
        - user: plan my reading
        - assert:
            request: {number: 1, tier: router}
        - assert:
            tier: default
        """,
    )
    result = run_test_file(path, make_tiered_harness)
    (case,) = result.results
    assert not case.passed
    assert case.reason == (
        "step 4 (assert, line 11): the last model request: tier 'reasoning', expected 'default'"
    )
