"""`history: {tool_results: ...}` in agent.yml and in a skill's frontmatter."""

from __future__ import annotations

from _project_helpers import codes, yaml_data

from keel.project.config import parse_agent_config
from keel.skills import parse_skill

AGENT = "agent:\n  persona: You are Pip.\n"


def test_agent_setting_is_read_and_unset_by_default() -> None:
    config, _ = parse_agent_config(yaml_data(AGENT, "agent.yml"))
    assert config is not None and config.history_tool_results is None
    text = AGENT + "history:\n  tool_results: false\n"
    config, diagnostics = parse_agent_config(yaml_data(text, "agent.yml"))
    assert config is not None and config.history_tool_results is False
    assert diagnostics == []


def test_agent_setting_errors_are_coded_with_their_line() -> None:
    text = AGENT + "history:\n  tool_results: sometimes\n  typo: 1\n"
    config, diagnostics = parse_agent_config(yaml_data(text, "agent.yml"))
    assert config is None
    assert codes(diagnostics) == [
        ("config.agent.unknown_key", 5),
        ("config.agent.bad_value", 4),
    ]
    config, diagnostics = parse_agent_config(yaml_data(AGENT + "history: no\n", "agent.yml"))
    assert config is None and codes(diagnostics) == [("config.agent.bad_value", 3)]


SKILL = "---\nname: Demo\ndescription: A demo skill.\n{extra}---\nDo it.\n"


def test_skill_setting_is_read() -> None:
    document, diagnostics = parse_skill("demo", SKILL.format(extra=""), "skill.md")
    assert document is not None and document.history_tool_results is None
    text = SKILL.format(extra="history:\n  tool_results: true\n")
    document, diagnostics = parse_skill("demo", text, "skill.md")
    assert document is not None and document.history_tool_results is True
    assert diagnostics == []


def test_skill_setting_errors_are_coded() -> None:
    text = SKILL.format(extra="history:\n  tool_results: 3\n  other: x\n")
    _, diagnostics = parse_skill("demo", text, "skill.md")
    assert sorted((d.code, d.line) for d in diagnostics) == [
        ("skill.frontmatter.bad_type", 5),
        ("skill.frontmatter.unknown_key", 6),
    ]
    _, diagnostics = parse_skill("demo", SKILL.format(extra="history: yes\n"), "skill.md")
    assert [(d.code, d.line) for d in diagnostics] == [("skill.frontmatter.bad_type", 4)]
