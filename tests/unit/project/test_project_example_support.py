"""The example agent's configuration and response files load without any diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.project.config import parse_agent_config, parse_integrations
from keel.project.responses import merge_responses, parse_responses
from keel.source.yaml import load_yaml

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "support"


def load(rel: str) -> object:
    data, diagnostics = load_yaml((EXAMPLE / rel).read_text(encoding="utf-8"), rel)
    assert diagnostics == []
    return data


def test_agent_yml() -> None:
    config, diagnostics = parse_agent_config(load("agent.yml"))
    assert diagnostics == []
    assert config is not None
    assert config.id == "brightwave-support" and config.persona.startswith("You are Wren")
    assert config.tool_timeout == 8.0 and config.max_turns == 8


def test_integrations_yml() -> None:
    config, diagnostics = parse_integrations(
        load("integrations.yml"), env={"OPENAI_API_KEY": "sk-test"}
    )
    assert diagnostics == []
    assert config is not None
    assert config.llm.model_group == "main"
    assert {t: config.group_for_tier(t) for t in ("router", "default", "reasoning")} == {
        "router": "fast",
        "default": "main",
        "reasoning": "deep",
    }
    assert set(config.channels) == {"rest", "inspector"}


def test_integrations_without_key_only_warns() -> None:
    config, diagnostics = parse_integrations(load("integrations.yml"), env={})
    assert config is not None
    assert {d.code for d in diagnostics} == {"config.env.unset"}


RESPONSE_FILES = sorted(p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("responses.yml"))


@pytest.mark.parametrize("rel", RESPONSE_FILES)
def test_responses_files(rel: str) -> None:
    responses, diagnostics = parse_responses(load(rel), rel)
    assert diagnostics == []
    assert responses


def test_response_names_are_unique_across_files() -> None:
    files = [parse_responses(load(rel), rel)[0] for rel in RESPONSE_FILES]
    registry, diagnostics = merge_responses((), files)
    assert diagnostics == []
    assert "utter_greet" in registry and "utter_confirm_plan_switch" in registry
