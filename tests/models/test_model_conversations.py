"""Issue 4's conversation tests (`tests/models/*.yml`) pass, so `make test` runs them.

Every file runs through the runner API with the `TieredModel` harness
(`tiered_harness.make_tiered_harness`: the engine's requests go through the real tier
resolution, and `model_called` names the concrete model and its cost). The files that do
not look at model ids or costs also run with `keel test`'s own harness (the engine calls
the `ScriptedModel` directly): the tier of each request is the engine's choice, whatever
answers it. Every test agent passes `keel validate`.

Coverage of the issue's acceptance list ("conversation tests cover tier resolution,
escalation and each router path; one shows the router tier used for routing and the
skill's tier for the skill"):

* tiers.yml: routing calls on `router`, a skill's `tier:` for its acting calls, `default`
  without one; each tier resolved to its group's model, priced at that model's prices.
* no_router.yml: without a router group, routing on `default` (source `model`); a tier that
  is not mapped falls back to the default group; no prices, no cost.
* escalation.yml: `reasoning_skills`, `long_input_chars` (and its boundary), `attachments`.
* routing.yml: slash command (no model call), sticky skill, router-tier classification.
* history.yml: `history_compressed` once the budget is exceeded; the pending confirmation
  and the collected values still reach the model.
* history_tools.yml, history_budget_tools.yml, history_long.yml (issue 19): earlier turns'
  tool calls and results in the history, in place; a skill's opt-out and the ordered-block
  default; whole pairs dropped oldest first for the budget; nothing dropped without one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tiered_harness import FAKE_USAGE, make_tiered_harness

from keel.events.model import ModelCalled
from keel.llm.usage import by_tier, per_turn, totals
from keel.testing import ScriptedModel
from keel.testing.conversation import parse_test_file, run_paths, run_test_file
from keel.testing.harness import make_harness

HERE = Path(__file__).resolve().parent
TEST_FILES = sorted(HERE.glob("*.yml"))
AGENTS = sorted(p.parent for p in (HERE / "agents").glob("*/agent.yml"))
TIERED_ONLY = frozenset({"tiers.yml", "no_router.yml"})
"""Files that check concrete model ids and costs, which only the TieredModel harness shows."""

NEUTRAL_FILES = [p for p in TEST_FILES if p.name not in TIERED_ONLY]


def _case_count(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        parsed, diagnostics = parse_test_file(path)
        assert parsed is not None, "\n".join(d.render() for d in diagnostics)
        total += len(parsed.cases)
    return total


def test_the_suite_is_all_there() -> None:
    names = {p.name for p in TEST_FILES}
    assert names >= {"tiers.yml", "no_router.yml", "escalation.yml", "routing.yml", "history.yml"}
    assert names >= {"history_tools.yml", "history_budget_tools.yml", "history_long.yml"}
    assert {p.name for p in AGENTS} == {"tiers", "plain", "history", "desk", "desk_budget"}


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_conversation_file_passes_with_tier_resolution(path: Path) -> None:
    result = run_test_file(path, make_tiered_harness)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert result.results, f"{path.name} ran no test"
    assert result.failed == 0, lines


@pytest.mark.parametrize("path", NEUTRAL_FILES, ids=[p.stem for p in NEUTRAL_FILES])
def test_conversation_file_passes_with_the_scripted_model(path: Path) -> None:
    result = run_test_file(path, make_harness)
    assert result.results and result.failed == 0, "\n".join(result.lines())


def test_the_tier_checks_fail_on_the_wrong_harness() -> None:
    """The model-id and cost checks are real: without tier resolution they fail."""
    summary = run_paths([HERE / "tiers.yml"], make_harness)
    assert summary.exit_code == 1
    assert "model_called model='fast-1'" in "\n".join(summary.lines())


def test_runner_api_runs_them_all() -> None:
    summary = run_paths([HERE], make_tiered_harness)
    assert summary.exit_code == 0, "\n".join(summary.lines())
    assert summary.final_line() == f"{_case_count(TEST_FILES)} passed, 0 failed"


@pytest.mark.parametrize("agent", AGENTS, ids=[p.name for p in AGENTS])
def test_agent_validates(agent: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(agent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # `history` runs an effectful tool from a step that the model is offered too, with no
    # gate (Mantle's behaviour): the one warning it may have.
    step_tools = completed.stdout.count("tool.step_tool_offered")
    assert step_tools == (1 if agent.name == "history" else 0), completed.stdout
    assert f"0 error(s), {step_tools} warning(s)" in completed.stderr, completed.stderr


# Usage and cost totals over a conversation ----------------------------------------------


async def test_usage_totals_per_turn_and_per_conversation() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [{"name": "activate", "arguments": {"target_id": "planner"}}]},
            "What did you enjoy reading last?",
            "Then try Middlemarch.",
        ]
    )
    harness = make_tiered_harness(HERE / "agents" / "tiers", script)
    await harness.send("plan my reading")
    await harness.send("Persuasion")

    calls = [e for e in harness.events if isinstance(e, ModelCalled)]
    assert [(c.model, c.tier, c.cost) for c in calls] == [
        ("fast-1", "router", 0.003),
        ("deep-1", "reasoning", 0.035),
        ("deep-1", "reasoning", 0.035),
    ]
    turns = [t for t in per_turn(harness.events) if t.totals.calls]
    assert [t.totals.calls for t in turns] == [2, 1]
    assert turns[0].totals.cost == pytest.approx(0.038)
    assert turns[1].totals.cost == pytest.approx(0.035)
    whole = totals(harness.events)
    assert whole.calls == 3 and whole.uncosted_calls == 0
    assert whole.input_tokens == 3 * FAKE_USAGE.input_tokens
    assert whole.cost == pytest.approx(0.073)
    assert set(by_tier(harness.events)) == {"router", "reasoning"}
    script.assert_complete()


async def test_calls_without_prices_are_counted_apart() -> None:
    script = ScriptedModel(
        [{"tool_calls": [{"name": "activate", "arguments": {"target_id": "faq"}}]}, "Yes."]
    )
    harness = make_tiered_harness(HERE / "agents" / "plain", script)
    await harness.send("do you sell maps?")

    whole = totals(harness.events)
    assert whole.calls == 2 and whole.uncosted_calls == 2 and whole.cost is None
