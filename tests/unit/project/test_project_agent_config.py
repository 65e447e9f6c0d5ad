"""agent.yml parsing: values, defaults and every diagnostic with its line."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from _project_helpers import codes, only, yaml_data

from keel.project.config import (
    DEFAULT_MAX_TURNS,
    AgentConfig,
    ChunkingConfig,
    Prompts,
    SessionConfig,
    parse_agent_config,
)

MINIMAL = """\
agent:
  persona: You are Pip, a helpful assistant.
"""


def parse(text: str) -> tuple[AgentConfig | None, list[tuple[str, int | None]]]:
    config, diagnostics = parse_agent_config(yaml_data(text, "agent.yml"))
    assert all(d.file == "agent.yml" for d in diagnostics)
    return config, codes(diagnostics)


def test_minimal_file_gets_every_default() -> None:
    config, found = parse(MINIMAL)
    assert found == []
    assert config is not None
    assert config.persona == "You are Pip, a helpful assistant."
    assert config.id is None and config.language is None
    assert config.rules == ()
    assert config.prompts == Prompts()
    assert config.references.embeddings is None
    assert config.references.chunking == ChunkingConfig(chunk_size=1000, chunk_overlap=20)
    assert config.tool_timeout == 10.0
    assert config.session_config == SessionConfig(session_expiration_time=60.0)
    assert config.max_turns == DEFAULT_MAX_TURNS == 10
    assert dict(config.conversation) == {} and dict(config.orchestrator) == {}


def test_full_file_is_read() -> None:
    config, found = parse(
        """\
        agent:
          id: parcel-help
          language: en
          persona: |
            You are Parcel Help.
        name: Parcel Help
        description: Courier assistant
        rules:
          - "Never promise a date: only tools know it."
          - Be brief.
        prompts:
          text_rules: Use markdown sparingly.
          voice_rules: One sentence.
          ack_rule: Acknowledge first.
          ack_reminder: Remember to acknowledge.
          ack_enabled: true
          ack_examples: ["One moment.", "Let me check."]
          routing_no_active_skill: Pick a skill.
        references:
          embeddings: embed
          chunking: {chunk_size: 500, chunk_overlap: 50}
        tool_timeout: 2.5
        session_config:
          session_expiration_time: 30
          carry_over_slots_to_new_session: false
        max_turns: 4
        conversation: {style: terse}
        orchestrator:
          preconditions: [a, b]
        """
    )
    assert found == []
    assert config is not None
    assert (config.id, config.language) == ("parcel-help", "en")
    assert (config.name, config.description) == ("Parcel Help", "Courier assistant")
    assert config.rules == ("Never promise a date: only tools know it.", "Be brief.")
    assert config.prompts.ack_enabled is True
    assert config.prompts.ack_examples == ("One moment.", "Let me check.")
    assert config.prompts.routing_no_active_skill == "Pick a skill."
    assert config.references.embeddings == "embed"
    assert config.references.chunking == ChunkingConfig(chunk_size=500, chunk_overlap=50)
    assert config.tool_timeout == 2.5
    assert config.session_config == SessionConfig(
        session_expiration_time=30.0, carry_over_slots_to_new_session=False
    )
    assert config.max_turns == 4
    assert config.conversation["style"] == "terse"
    assert isinstance(config.orchestrator, MappingProxyType)
    assert config.orchestrator["preconditions"] == ("a", "b")


def test_config_is_frozen() -> None:
    config, _ = parse(MINIMAL)
    assert config is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.persona = "other"  # type: ignore[misc]


def test_empty_file_is_missing_section() -> None:
    config, diagnostics = parse_agent_config(None)
    assert config is None
    assert codes(diagnostics) == [("config.agent.missing_section", None)]


def test_file_without_agent_section() -> None:
    config, found = parse("name: x\nrules: []\n")
    assert config is None
    assert found == [("config.agent.missing_section", 1)]


def test_top_level_must_be_mapping() -> None:
    config, found = parse("- a\n- b\n")
    assert config is None
    assert found == [("config.agent.not_mapping", 1)]


def test_missing_persona_points_at_agent_section() -> None:
    config, found = parse("name: x\nagent:\n  id: a\n")
    assert config is None
    assert found == [("config.agent.missing_persona", 3)]


@pytest.mark.parametrize("value", ['""', "'   '", "[a]", "42"])
def test_empty_or_wrong_persona(value: str) -> None:
    config, found = parse(f"agent:\n  id: a\n  persona: {value}\n")
    assert config is None
    assert found == [("config.agent.missing_persona", 3)]


def test_agent_section_must_be_mapping() -> None:
    config, found = parse("agent: hello\n")
    assert config is None
    assert found == [("config.agent.bad_value", 1)]


def test_wrongly_typed_identity_values() -> None:
    config, found = parse(MINIMAL + "  id: 7\n  language: [en]\nname: 3\n")
    assert config is None
    assert found == [
        ("config.agent.bad_value", 3),
        ("config.agent.bad_value", 4),
        ("config.agent.bad_value", 5),
    ]


def test_unknown_top_level_key_is_a_warning_only() -> None:
    config, diagnostics = parse_agent_config(yaml_data(MINIMAL + "tool_timout: 5\n"))
    assert config is not None
    found = only(diagnostics, "config.agent.unknown_key")
    assert (found.line, found.severity, found.key) == (3, "warning", "tool_timout")
    assert config.tool_timeout == 10.0


def test_keys_inside_agent_section() -> None:
    config, diagnostics = parse_agent_config(
        yaml_data(
            MINIMAL
            + "  rules: [a]\n  voice: {enabled: true}\n  startup:\n    welcome_message: hi\n"
            + "  colour: blue\n"
        )
    )
    assert config is not None
    assert codes(diagnostics) == [
        ("config.agent.nested_key", 3),
        ("config.agent.legacy_key", 4),
        ("config.agent.legacy_key", 5),
        ("config.agent.unknown_key", 7),
    ]
    assert [d.severity for d in diagnostics] == ["info", "warning", "warning", "warning"]
    assert config.rules == ("a",)
    assert config.legacy["startup"] == {"welcome_message": "hi"}


def test_nested_name_and_description_are_accepted_top_level_wins() -> None:
    config, found = parse(MINIMAL + "  name: Inner\n  description: Inner desc\nname: Outer\n")
    assert found == []
    assert config is not None
    assert (config.name, config.description) == ("Outer", "Inner desc")


def test_rules_must_be_a_list() -> None:
    config, found = parse(MINIMAL + "rules: be nice\n")
    assert config is None
    assert found == [("config.agent.bad_rules", 3)]


def test_rule_items_must_be_strings_with_hint_for_colon() -> None:
    config, diagnostics = parse_agent_config(
        yaml_data(MINIMAL + "rules:\n  - ok\n  - Never say: this\n  - ''\n  - 5\n")
    )
    assert config is None
    assert codes(diagnostics) == [
        ("config.agent.bad_rules", 5),
        ("config.agent.bad_rules", 6),
        ("config.agent.bad_rules", 7),
    ]
    assert "unquoted" in diagnostics[0].message


def test_prompts_unknown_key_warns_and_known_keys_kept() -> None:
    config, diagnostics = parse_agent_config(
        yaml_data(MINIMAL + "prompts:\n  text_rules: x\n  greeting: hi\n")
    )
    assert config is not None
    found = only(diagnostics, "config.prompts.unknown_key")
    assert (found.line, found.severity) == (5, "warning")
    assert config.prompts.text_rules == "x"


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("prompts: [a]\n", 3),
        ("prompts:\n  text_rules: 5\n", 4),
        ("prompts:\n  ack_enabled: 'yes'\n", 4),
        ("prompts:\n  ack_examples: [1, 2]\n", 4),
    ],
)
def test_prompts_bad_values(body: str, line: int) -> None:
    config, found = parse(MINIMAL + body)
    assert config is None
    assert found == [("config.prompts.bad_value", line)]


def test_prompt_ack_examples_may_be_one_string() -> None:
    config, _ = parse(MINIMAL + "prompts:\n  ack_examples: One moment.\n")
    assert config is not None
    assert config.prompts.ack_examples == ("One moment.",)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("references:\n  chunking:\n    chunk_size: 100\n    overlap: 5\n", 6),
        ("references:\n  chunking:\n    chunk_size: 100\n    chunk_overlap: 100\n", 6),
        ("references:\n  chunking:\n    chunk_size: 10\n", 5),
        ("references:\n  chunking:\n    chunk_size: big\n", 5),
        ("references:\n  chunking:\n    chunk_overlap: -1\n", 5),
        ("references:\n  chunking: [1]\n", 4),
    ],
)
def test_bad_chunking(body: str, line: int) -> None:
    config, found = parse(MINIMAL + body)
    assert config is None
    assert found == [("config.references.bad_chunking", line)]


def test_references_other_problems() -> None:
    config, found = parse(MINIMAL + "references:\n  embeddings: 5\n  index: x\n")
    assert config is None
    assert found == [("config.references.unknown_key", 5), ("config.references.bad_value", 4)]
    config, found = parse(MINIMAL + "references: yes\n")
    assert found == [("config.references.bad_value", 3)]


@pytest.mark.parametrize("value", ["0", "-1", "ten", "true"])
def test_bad_tool_timeout(value: str) -> None:
    config, found = parse(MINIMAL + f"tool_timeout: {value}\n")
    assert config is None
    assert found == [("config.agent.bad_tool_timeout", 3)]


@pytest.mark.parametrize("value", ["0", "2.5", "'3'"])
def test_bad_max_turns(value: str) -> None:
    config, found = parse(MINIMAL + f"max_turns: {value}\n")
    assert config is None
    assert found == [("config.agent.bad_max_turns", 3)]


def test_max_tool_calls_per_reply() -> None:
    config, found = parse(MINIMAL)
    assert config is not None and config.max_tool_calls_per_reply == 16
    config, found = parse(MINIMAL + "max_tool_calls_per_reply: 3\n")
    assert found == [] and config is not None and config.max_tool_calls_per_reply == 3


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "many"])
def test_bad_max_tool_calls_per_reply(value: str) -> None:
    config, found = parse(MINIMAL + f"max_tool_calls_per_reply: {value}\n")
    assert config is None
    assert found == [("config.agent.bad_max_tool_calls_per_reply", 3)]


def test_session_config_problems() -> None:
    _, found = parse(MINIMAL + "session_config:\n  session_expiration_time: -5\n")
    assert found == [("config.session.bad_value", 4)]
    _, found = parse(MINIMAL + "session_config: 60\n")
    assert found == [("config.session.bad_value", 3)]
    _, found = parse(MINIMAL + "session_config:\n  carry_over_slots_to_new_session: 1\n")
    assert found == [("config.session.bad_value", 4)]
    config, found = parse(MINIMAL + "session_config:\n  expiry: 5\n")
    assert found == [("config.session.unknown_key", 4)]
    assert config is not None and config.session_config.session_expiration_time == 60.0


def test_zero_expiration_means_never() -> None:
    config, found = parse(MINIMAL + "session_config:\n  session_expiration_time: 0\n")
    assert found == []
    assert config is not None and config.session_config.session_expiration_time == 0.0


def test_conversation_and_orchestrator_must_be_mappings() -> None:
    config, found = parse(MINIMAL + "conversation: [x]\norchestrator: 5\n")
    assert config is None
    assert found == [("config.agent.bad_value", 3), ("config.agent.bad_value", 4)]
