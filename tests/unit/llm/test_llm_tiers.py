"""Tier choice (routing, a skill's tier, escalation) and resolution to model groups."""

from __future__ import annotations

import textwrap
from types import MappingProxyType

import pytest

from keel.errors import KeelError
from keel.llm import ModelError
from keel.llm.errors import ModelConfigError
from keel.llm.tiers import (
    TIERS,
    EscalationRules,
    Purpose,
    TierChoice,
    choose_tier,
    has_router,
    model_ids,
    resolve,
)
from keel.project.integrations import IntegrationsConfig, LlmConfig, parse_integrations
from keel.project.model_groups import ModelGroup, ModelSpec
from keel.source.yaml import load_yaml

RULES = EscalationRules(
    reasoning_skills=frozenset({"plan_trip"}), long_input_chars=100, attachments=2
)


def group(group_id: str, *models: str) -> ModelGroup:
    specs = tuple(ModelSpec(provider="openai", model=m, line=None) for m in models)
    return ModelGroup(id=group_id, models=specs, line=None)


def config(tiers: dict[str, str], model_group: str = "main") -> IntegrationsConfig:
    return IntegrationsConfig(
        llm=LlmConfig(model_group=model_group),
        model_groups=(
            group("main", "gpt-4o-mini", "qwen2.5"),
            group("small", "gpt-4.1-nano"),
            group("big", "o3"),
        ),
        tiers=MappingProxyType(tiers),
    )


def choose(
    purpose: Purpose = "act",
    *,
    skill_id: str | None = "check_status",
    skill_tier: str | None = None,
    text: str = "hello",
    attachments: int = 0,
    rules: EscalationRules = RULES,
    router: bool = False,
) -> TierChoice:
    return choose_tier(
        purpose=purpose,
        skill_id=skill_id,
        skill_tier=skill_tier,
        user_text=text,
        attachments=attachments,
        rules=rules,
        router_configured=router,
    )


def test_tiers_are_the_three_known_ones() -> None:
    assert TIERS == ("router", "default", "reasoning")


def test_routing_uses_the_router_tier_when_configured() -> None:
    assert choose("route", router=True) == TierChoice(
        tier="router", reason="routing uses the router tier"
    )
    fallback = choose("route", router=False)
    assert fallback.tier == "default" and "no router group" in fallback.reason


def test_routing_ignores_skill_tier_and_escalation() -> None:
    found = choose(
        "route", skill_id="plan_trip", skill_tier="reasoning", text="x" * 500, attachments=9
    )
    assert found.tier == "default" and found.rule is None


def test_acting_without_a_declared_tier_uses_default() -> None:
    found = choose()
    assert (found.tier, found.rule) == ("default", None)
    assert "default" in found.reason


def test_a_skill_declared_tier_wins_for_acting_even_with_a_router() -> None:
    found = choose(skill_tier="router", router=True)
    assert found == TierChoice(tier="router", reason="skill `check_status` declares tier `router`")


def test_listed_skill_escalates_to_reasoning() -> None:
    found = choose(skill_id="plan_trip")
    assert (found.tier, found.rule) == ("reasoning", "reasoning_skills")
    assert "escalation.reasoning_skills" in found.reason and "plan_trip" in found.reason


def test_long_input_escalates_only_above_the_limit() -> None:
    assert choose(text="x" * 100).tier == "default"
    found = choose(text="x" * 101)
    assert (found.tier, found.rule) == ("reasoning", "long_input_chars")
    assert "101 characters" in found.reason and "(100)" in found.reason


def test_attachments_escalate_at_the_threshold() -> None:
    assert choose(attachments=1).tier == "default"
    found = choose(attachments=2)
    assert (found.tier, found.rule) == ("reasoning", "attachments")
    assert "2 attachment(s)" in found.reason


def test_escalation_raises_a_cheaper_declared_tier() -> None:
    found = choose(skill_tier="router", attachments=3)
    assert (found.tier, found.rule) == ("reasoning", "attachments")


def test_a_declared_reasoning_tier_is_not_reported_as_escalated() -> None:
    found = choose(skill_id="plan_trip", skill_tier="reasoning")
    assert (found.tier, found.rule) == ("reasoning", None)
    assert "declares" in found.reason


def test_first_firing_rule_is_named() -> None:
    found = choose(skill_id="plan_trip", text="x" * 500, attachments=5)
    assert found.rule == "reasoning_skills"
    found = choose(text="x" * 500, attachments=5)
    assert found.rule == "long_input_chars"


def test_no_rules_never_escalate() -> None:
    found = choose(skill_id="plan_trip", text="x" * 10_000, attachments=50, rules=EscalationRules())
    assert found.tier == "default"


def test_resolve_mapped_tier() -> None:
    integrations = config({"router": "small", "default": "main", "reasoning": "big"})
    assert resolve(integrations, "router").id == "small"
    assert resolve(integrations, "reasoning").id == "big"
    assert model_ids(integrations, "default") == ("gpt-4o-mini", "qwen2.5")


def test_unmapped_tier_falls_back_to_default_then_llm_model_group() -> None:
    integrations = config({"default": "small"})
    assert resolve(integrations, "reasoning").id == "small"
    assert resolve(integrations, "router").id == "small"
    bare = config({})
    assert [resolve(bare, tier).id for tier in TIERS] == ["main", "main", "main"]
    assert resolve(bare, "some_custom_tier").id == "main"


def test_resolution_matches_group_for_tier() -> None:
    for tiers in ({}, {"default": "small"}, {"router": "small", "reasoning": "big"}):
        integrations = config(tiers)
        for tier in TIERS:
            assert resolve(integrations, tier).id == integrations.group_for_tier(tier)


def test_undeclared_group_is_a_config_error_not_a_model_error() -> None:
    integrations = config({"reasoning": "missing"})
    with pytest.raises(ModelConfigError) as caught:
        resolve(integrations, "reasoning")
    assert caught.value.group == "missing"
    assert "`missing`" in str(caught.value)
    assert isinstance(caught.value, KeelError) and not isinstance(caught.value, ModelError)


def test_has_router() -> None:
    assert has_router(config({"router": "small"}))
    assert not has_router(config({"default": "small"}))


def test_router_for_routing_and_skill_tier_for_the_skill_from_yaml() -> None:
    text = textwrap.dedent(
        """\
        llm: {model_group: main}
        model_groups:
          - id: main
            models: [{provider: openai, model: gpt-4o-mini}]
          - id: small
            models: [{provider: openai, model: gpt-4.1-nano}]
          - id: big
            models: [{provider: anthropic, model: claude-opus-4}]
        tiers: {router: small, reasoning: big}
        escalation: {long_input_chars: 20}
        """
    )
    data, _ = load_yaml(text, "integrations.yml")
    integrations, diagnostics = parse_integrations(data, env={})
    assert diagnostics == [] and integrations is not None
    rules = integrations.escalation
    route = choose("route", rules=rules, router=has_router(integrations))
    act = choose(skill_tier="default", rules=rules, router=has_router(integrations))
    long = choose(skill_tier="default", text="please " * 5, rules=rules)
    assert model_ids(integrations, route.tier) == ("gpt-4.1-nano",)
    assert model_ids(integrations, act.tier) == ("gpt-4o-mini",)
    assert (long.tier, model_ids(integrations, long.tier)) == ("reasoning", ("claude-opus-4",))
