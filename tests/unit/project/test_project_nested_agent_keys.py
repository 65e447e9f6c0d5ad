"""`agent.rules` and `agent.references` nested under `agent:` (older Mantle builds read
them there): honoured with an info note naming the newer place; per key, the top level wins
over the nested one with a warning."""

from __future__ import annotations

from _project_helpers import codes, only, yaml_data

from keel.project.config import AgentConfig, parse_agent_config
from keel.source.diagnostics import Diagnostic

HEAD = """\
agent:
  persona: You are Tram.
"""


def parse(text: str) -> tuple[AgentConfig, list[Diagnostic]]:
    config, diagnostics = parse_agent_config(yaml_data(text, "agent.yml"))
    assert config is not None, [d.render() for d in diagnostics]
    return config, diagnostics


def test_nested_rules_are_honoured_with_a_note() -> None:
    config, diagnostics = parse(HEAD + "  rules:\n    - Be brief.\n    - Never guess fares.\n")
    assert config.rules == ("Be brief.", "Never guess fares.")
    note = only(diagnostics, "config.agent.nested_key")
    assert (note.line, note.severity, note.key) == (3, "info", "agent.rules")
    assert "top level" in note.message
    assert codes(diagnostics) == [("config.agent.nested_key", 3)]


def test_nested_references_instructions_are_honoured_with_a_note() -> None:
    config, diagnostics = parse(
        HEAD + "  references:\n    instructions: Name the document you used.\n"
    )
    assert config.references.instructions == "Name the document you used."
    note = only(diagnostics, "config.agent.nested_key")
    assert (note.line, note.severity, note.key) == (3, "info", "agent.references")


def test_nested_and_top_level_references_merge_per_key() -> None:
    config, diagnostics = parse(
        HEAD
        + "  references:\n    instructions: Cite the source.\n"
        + "    chunking: {chunk_size: 400, chunk_overlap: 10}\n"
        + "references:\n  chunking: {chunk_size: 500, chunk_overlap: 50}\n"
    )
    assert config.references.instructions == "Cite the source."
    assert config.references.chunking.chunk_size == 500
    shadowed = only(diagnostics, "config.agent.shadowed_key")
    assert (shadowed.line, shadowed.severity) == (5, "warning")
    assert shadowed.key == "agent.references.chunking"


def test_top_level_rules_win_over_nested_ones_with_a_warning() -> None:
    config, diagnostics = parse(HEAD + "  rules: [inner]\nrules: [outer]\n")
    assert config.rules == ("outer",)
    shadowed = only(diagnostics, "config.agent.shadowed_key")
    assert (shadowed.line, shadowed.severity, shadowed.key) == (3, "warning", "agent.rules")
    assert not [d for d in diagnostics if d.code == "config.agent.nested_key"]


def test_bad_nested_values_are_reported_at_their_line() -> None:
    _, diagnostics = parse_agent_config(
        yaml_data(HEAD + "  rules: be brief\n  references:\n    instructions: 3\n", "agent.yml")
    )
    assert ("config.agent.bad_rules", 3) in codes(diagnostics)
    assert ("config.references.bad_value", 5) in codes(diagnostics)


def test_other_top_level_keys_nested_are_still_ignored() -> None:
    config, diagnostics = parse(HEAD + "  tool_timeout: 3\n")
    assert config.tool_timeout == 10.0
    assert codes(diagnostics) == [("config.agent.misplaced_key", 3)]
