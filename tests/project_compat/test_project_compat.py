"""Patterns real Mantle projects use in their configuration (agent.yml, integrations.yml,
their own Python dependencies) run on Keel: the conversation files here pass, and every
fixture agent passes `keel validate` with exactly the notes and warnings it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.project.load import load_project
from keel.testing.conversation import run_test_file
from keel.testing.harness import make_harness

HERE = Path(__file__).resolve().parent
TEST_FILES = sorted(HERE.glob("*.yml"))


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_conversation_file_passes(path: Path) -> None:
    result = run_test_file(path, make_harness)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert result.results, f"{path.name} ran no test"
    assert result.failed == 0, lines


EXPECTED: dict[str, list[tuple[str, int | None, str, str]]] = {
    "nested_keys": [
        ("agent.yml", 7, "config.agent.nested_key", "info"),
        ("agent.yml", 9, "config.agent.nested_key", "info"),
    ],
    "unused_blocks": [
        ("agent.yml", 6, "config.agent.unknown_key", "warning"),
        ("integrations.yml", 8, "config.integrations.not_used", "warning"),
        ("integrations.yml", 11, "config.integrations.not_used", "warning"),
        ("integrations.yml", 13, "config.integrations.not_used", "warning"),
        ("responses.yml", 4, "response.file.unknown_key", "warning"),
        ("skills/fares/memory.yml", 6, "memory.unknown_key", "warning"),
    ],
}
"""Agent -> (file, line, code, severity) of every diagnostic `load_project` reports."""


@pytest.mark.parametrize("agent", sorted(EXPECTED))
def test_agent_loads_with_exactly_its_notes(agent: str) -> None:
    definition, diagnostics = load_project(HERE / "agents" / agent)
    found = [(d.file, d.line, d.code, d.severity) for d in diagnostics]
    assert definition is not None, [d.render() for d in diagnostics]
    assert found == EXPECTED[agent], [d.render() for d in diagnostics]
