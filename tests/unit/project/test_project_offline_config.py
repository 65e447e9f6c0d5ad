"""`routing:` and `extraction:` in agent.yml, and `extract:` in memory.yml, are checked."""

from __future__ import annotations

from keel.project.config import parse_agent_config
from keel.project.offline_config import runs


def test_routing_config_values_and_diagnostics() -> None:
    config, problems = parse_agent_config(
        {"agent": {"persona": "p"}, "routing": {"offline": {"enabled": True, "threshold": 0.6}}}
    )
    assert config is not None and not problems
    assert config.offline.router.enabled == "always" and config.offline.router.threshold == 0.6
    assert config.offline.extraction == "auto"
    _, problems = parse_agent_config(
        {"agent": {"persona": "p"}, "routing": {"offline": {"threshold": 2, "enabled": "x"}}}
    )
    assert [d.code for d in problems] == ["config.routing.bad_value"] * 2


def test_auto_runs_only_without_a_model() -> None:
    assert runs("auto", has_model=False) and not runs("auto", has_model=True)
    assert runs("always", has_model=True) and not runs("never", has_model=False)
