"""Cost of a call from per-token prices; usage totals per turn and per conversation."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from keel.events.model import Event, ModelCalled, TurnEnded, TurnStarted, UserMessage
from keel.llm import Usage
from keel.llm.usage import (
    TurnUsage,
    UsageTotals,
    by_model,
    by_tier,
    cost_of,
    per_turn,
    spec_for,
    totals,
)
from keel.project.integrations import IntegrationsConfig, LlmConfig
from keel.project.model_groups import ModelGroup, ModelSpec


def spec(
    model: str = "gpt-4o", *, per_input: float | None = None, per_output: float | None = None
) -> ModelSpec:
    return ModelSpec(
        provider="openai",
        model=model,
        line=None,
        input_cost_per_token=per_input,
        output_cost_per_token=per_output,
    )


def called(
    model: str = "gpt-4o",
    *,
    tier: str = "default",
    tokens: tuple[int, int] = (10, 5),
    latency: float = 100.0,
    cost: float | None = None,
) -> ModelCalled:
    return ModelCalled(
        model=model,
        tier=tier,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        latency_ms=latency,
        cost=cost,
    )


def test_cost_from_both_prices() -> None:
    usage = Usage(input_tokens=1000, output_tokens=200)
    assert cost_of(spec(per_input=0.002, per_output=0.01), usage) == pytest.approx(4.0)


def test_no_price_means_unknown_cost() -> None:
    usage = Usage(input_tokens=1000, output_tokens=200)
    assert cost_of(None, usage) is None
    assert cost_of(spec(), usage) is None


def test_one_missing_price_counts_that_side_as_free() -> None:
    usage = Usage(input_tokens=1000, output_tokens=200)
    assert cost_of(spec(per_input=0.001), usage) == pytest.approx(1.0)
    assert cost_of(spec(per_output=0.01), usage) == pytest.approx(2.0)
    assert cost_of(spec(per_input=0.0, per_output=0.0), usage) == 0.0


def test_totals_sum_calls_and_keep_unknown_costs_apart() -> None:
    events: list[Event] = [
        UserMessage(text="hi", message_id="m1"),
        called(tokens=(100, 20), latency=50.0, cost=0.5),
        called(tokens=(30, 5), latency=25.0, cost=None),
        called(tokens=(10, 1), latency=5.0, cost=0.25),
    ]
    found = totals(events)
    assert found == UsageTotals(
        calls=3,
        input_tokens=140,
        output_tokens=26,
        latency_ms=80.0,
        cost=0.75,
        uncosted_calls=1,
    )
    assert found.total_tokens == 166


def test_cost_stays_unknown_when_no_call_has_one() -> None:
    found = totals([called(cost=None), called(cost=None)])
    assert (found.cost, found.uncosted_calls, found.calls) == (None, 2, 2)
    assert totals([]) == UsageTotals()


def test_totals_add_up() -> None:
    left = UsageTotals().add(called(cost=1.0))
    right = UsageTotals().add(called(cost=None))
    assert (left + right).cost == 1.0
    assert (right + left).cost == 1.0
    assert (right + right).cost is None
    assert (left + left).cost == 2.0


def test_per_turn_groups_calls_by_turn() -> None:
    events: list[Event] = [
        called(tokens=(1, 1)),  # before any turn (e.g. a session start greeting)
        TurnStarted(turn_id="t1"),
        called(tokens=(10, 2), cost=0.1),
        called(tokens=(20, 3), cost=0.2),
        TurnEnded(turn_id="t1", stop_reason="end_turn"),
        TurnStarted(turn_id="t2"),
        TurnEnded(turn_id="t2", stop_reason="end_turn"),
        called(tokens=(7, 7)),  # between turns
        called(tokens=(1, 0)),
        TurnStarted(turn_id="t3"),
        called(tokens=(5, 5), cost=0.05),
    ]
    turns = per_turn(events)
    assert [t.turn_id for t in turns] == [None, "t1", "t2", None, "t3"]
    first = turns[1].totals
    assert (first.calls, first.input_tokens, first.output_tokens) == (2, 30, 5)
    assert (first.latency_ms, first.uncosted_calls) == (200.0, 0)
    assert first.cost == pytest.approx(0.3)
    assert turns[2] == TurnUsage(turn_id="t2", totals=UsageTotals())
    assert (turns[3].totals.calls, turns[3].totals.input_tokens) == (2, 8)
    assert turns[4].totals.cost == 0.05
    assert sum(t.totals.calls for t in turns) == totals(events).calls


def test_breakdown_by_model_and_tier() -> None:
    events: list[Event] = [
        called("gpt-4.1-nano", tier="router", cost=0.01),
        called("gpt-4o", tier="default", cost=0.2),
        called("gpt-4.1-nano", tier="router", cost=0.01),
        called("o3", tier="reasoning"),
    ]
    models = by_model(events)
    assert list(models) == ["gpt-4.1-nano", "gpt-4o", "o3"]
    assert (models["gpt-4.1-nano"].calls, models["gpt-4.1-nano"].cost) == (2, 0.02)
    assert models["o3"].cost is None
    tiers = by_tier(events)
    assert list(tiers) == ["router", "default", "reasoning"]
    assert tiers["default"].input_tokens == 10


def test_spec_for_prefers_the_resolved_group() -> None:
    cheap = spec("gpt-4o", per_input=0.001)
    dear = spec("gpt-4o", per_input=0.005)
    integrations = IntegrationsConfig(
        llm=LlmConfig(model_group="a"),
        model_groups=(
            ModelGroup(id="a", models=(cheap,), line=None),
            ModelGroup(id="b", models=(spec("o3"), dear), line=None),
        ),
        tiers=MappingProxyType({}),
    )
    assert spec_for(integrations, "gpt-4o") is cheap
    assert spec_for(integrations, "gpt-4o", group_id="b") is dear
    assert spec_for(integrations, "gpt-4o", group_id="nope") is cheap
    assert spec_for(integrations, "unknown-model") is None


# Prompt-cache tokens -------------------------------------------------------------------------

CACHED = Usage(input_tokens=2000, output_tokens=100, cached_input_tokens=1500)


def test_cached_tokens_at_their_configured_price() -> None:
    priced = ModelSpec(
        provider="openai",
        model="gpt-4.1",
        line=None,
        input_cost_per_token=2e-6,
        output_cost_per_token=8e-6,
        cached_input_cost_per_token=0.5e-6,
    )
    # 500 fresh at 2e-6, 1,500 cached at 0.5e-6, 100 out at 8e-6.
    assert cost_of(priced, CACHED) == pytest.approx(500 * 2e-6 + 1500 * 0.5e-6 + 100 * 8e-6)


def test_cached_tokens_without_a_cached_price_cost_the_input_price_but_for_anthropic() -> None:
    plain = spec(per_input=2e-6, per_output=8e-6)
    assert cost_of(plain, CACHED) == cost_of(plain, Usage(input_tokens=2000, output_tokens=100))
    claude = ModelSpec(
        provider="Anthropic",
        model="claude-sonnet-4-5",
        line=None,
        input_cost_per_token=3e-6,
        output_cost_per_token=15e-6,
    )
    usage = Usage(
        input_tokens=2000, output_tokens=100, cached_input_tokens=1500, cache_write_tokens=400
    )
    # Anthropic's own multiples of the input price: reads 0.1, five-minute writes 1.25.
    expected = 100 * 3e-6 + 1500 * 0.3e-6 + 400 * 3.75e-6 + 100 * 15e-6
    assert cost_of(claude, usage) == pytest.approx(expected)


def test_totals_sum_the_cache_counts() -> None:
    first = ModelCalled(
        model="m",
        tier="default",
        input_tokens=10,
        output_tokens=1,
        latency_ms=1.0,
        cached_input_tokens=6,
        cache_write_tokens=2,
    )
    second = ModelCalled(
        model="m",
        tier="default",
        input_tokens=10,
        output_tokens=1,
        latency_ms=1.0,
        cached_input_tokens=8,
    )
    summed = totals([first, second])
    assert (summed.cached_input_tokens, summed.cache_write_tokens) == (14, 2)
