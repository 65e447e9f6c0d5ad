"""`escalation:` in integrations.yml: the rules that raise acting calls to the reasoning tier."""

from __future__ import annotations

from _project_helpers import codes, only, yaml_data

from keel.project.integrations import EscalationRules, IntegrationsConfig, parse_integrations
from keel.source.diagnostics import Diagnostic

BASE = """\
llm:
  model_group: main
model_groups:
  - id: main
    models: [{provider: openai, model: gpt-4o-mini}]
  - id: big
    models: [{provider: openai, model: gpt-5.1}]
tiers:
  reasoning: big
"""
# `escalation:` starts on line 10 of every document below.


def parse(text: str) -> tuple[IntegrationsConfig | None, list[Diagnostic]]:
    return parse_integrations(yaml_data(text, "integrations.yml"), env={})


def test_all_rules_are_read() -> None:
    config, diagnostics = parse(
        BASE
        + "escalation:\n"
        + "  reasoning_skills: [plan_trip, dispute_charge]\n"
        + "  long_input_chars: 4000\n"
        + "  attachments: 2\n"
    )
    assert diagnostics == []
    assert config is not None
    assert config.escalation == EscalationRules(
        reasoning_skills=frozenset({"plan_trip", "dispute_charge"}),
        long_input_chars=4000,
        attachments=2,
    )
    assert not config.escalation.empty


def test_no_escalation_section_means_no_rules() -> None:
    config, diagnostics = parse(BASE)
    assert diagnostics == []
    assert config is not None
    assert config.escalation == EscalationRules()
    assert config.escalation.empty


def test_an_empty_section_is_no_rules() -> None:
    config, diagnostics = parse(BASE + "escalation:\n")
    assert diagnostics == []
    assert config is not None and config.escalation.empty


def test_escalation_must_be_a_mapping() -> None:
    config, diagnostics = parse(BASE + "escalation: [plan_trip]\n")
    assert config is None
    assert codes(diagnostics) == [("config.escalation.bad_value", 10)]


def test_reasoning_skills_must_be_a_list_of_ids() -> None:
    config, diagnostics = parse(BASE + "escalation:\n  reasoning_skills: plan_trip\n")
    assert config is None
    assert codes(diagnostics) == [("config.escalation.bad_value", 11)]
    config, diagnostics = parse(
        BASE + "escalation:\n  reasoning_skills:\n    - plan_trip\n    - 3\n    - ''\n"
    )
    assert config is None
    assert codes(diagnostics) == [
        ("config.escalation.bad_value", 13),
        ("config.escalation.bad_value", 14),
    ]
    assert "reasoning_skills[1]" in diagnostics[0].message


def test_limits_must_be_whole_numbers_above_zero() -> None:
    config, diagnostics = parse(BASE + "escalation:\n  long_input_chars: 0\n  attachments: true\n")
    assert config is None
    assert codes(diagnostics) == [
        ("config.escalation.bad_value", 11),
        ("config.escalation.bad_value", 12),
    ]
    assert "escalation.long_input_chars" in diagnostics[0].message
    _, diagnostics = parse(BASE + "escalation:\n  long_input_chars: 12.5\n")
    assert codes(diagnostics) == [("config.escalation.bad_value", 11)]


def test_unknown_rule_is_a_warning() -> None:
    config, diagnostics = parse(BASE + "escalation:\n  attachments: 1\n  difficulty: high\n")
    assert config is not None and config.escalation.attachments == 1
    found = only(diagnostics, "config.escalation.unknown_key")
    assert (found.severity, found.line, found.key) == ("warning", 12, "escalation.difficulty")


def test_rules_without_a_reasoning_tier_are_warned() -> None:
    text = BASE.replace("tiers:\n  reasoning: big\n", "")
    config, diagnostics = parse(text + "escalation:\n  attachments: 1\n")
    assert config is not None
    found = only(diagnostics, "config.escalation.no_reasoning_tier")
    assert (found.severity, found.line) == ("warning", 8)


def test_no_reasoning_tier_warning_needs_rules() -> None:
    text = BASE.replace("tiers:\n  reasoning: big\n", "")
    _, diagnostics = parse(text + "escalation: {}\n")
    assert diagnostics == []


def test_escalation_is_not_an_unknown_top_level_key() -> None:
    _, diagnostics = parse(BASE + "escalation:\n  attachments: 3\n")
    assert "config.integrations.unknown_key" not in [d.code for d in diagnostics]
