"""The turn loop's conversation tests (`tests/conversations/*.yml`) pass, so `make test` runs
them: once per file in process through the runner API, once through the real `keel test`
command in a subprocess; and every test agent passes `keel validate`.

Each YAML file covers one topic of issue 3's acceptance list (see the `description:` at the
top of each file); the agents they run against are under `agents/`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from keel.testing.conversation import parse_test_file, run_paths, run_test_file
from keel.testing.harness import make_harness

HERE = Path(__file__).resolve().parent
TEST_FILES = sorted(HERE.glob("*.yml"))
AGENTS = sorted(p.parent for p in (HERE / "agents").glob("*/agent.yml"))
EXPECTED_WARNINGS = {"mantle": 2, "greeter": 1, "library": 1, "steps": 6}
"""Agents that use patterns Mantle loads and Keel warns about (tests/cli checks which)."""
STEP_TOOL_WARNINGS = {"greeter": 1, "library": 1, "steps": 6}
"""Of those, `tool.step_tool_offered`: an effectful tool an `execute_tool` step runs is
offered to the model too, with no gate (Mantle's behaviour, kept: these agents test it)."""


def _case_count() -> int:
    total = 0
    for path in TEST_FILES:
        parsed, diagnostics = parse_test_file(path)
        assert parsed is not None, "\n".join(d.render() for d in diagnostics)
        total += len(parsed.cases)
    return total


def test_the_suite_is_all_there() -> None:
    assert len(TEST_FILES) >= 14
    assert {p.name for p in AGENTS} >= {"steps", "guards", "knowledge", "greeter"}


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_conversation_file_passes(path: Path) -> None:
    result = run_test_file(path, make_harness)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert result.results, f"{path.name} ran no test"
    assert result.failed == 0, lines


def test_runner_api_runs_them_all() -> None:
    summary = run_paths([HERE], make_harness)
    assert summary.exit_code == 0, "\n".join(summary.lines())
    assert summary.final_line() == f"{_case_count()} passed, 0 failed"


def test_keel_test_command_runs_them_all() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "keel", "test", str(HERE)],
        capture_output=True,
        text=True,
        check=False,
        cwd=HERE.parents[1],
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    summary = completed.stdout.strip().splitlines()[-1]
    assert summary == f"{_case_count()} passed, 0 failed", output


@pytest.mark.parametrize("agent", AGENTS, ids=[p.name for p in AGENTS])
def test_agent_validates(agent: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(agent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    warnings = EXPECTED_WARNINGS.get(agent.name, 0)
    assert f"0 error(s), {warnings} warning(s)" in completed.stderr, completed.stderr
    step_tools = completed.stdout.count("tool.step_tool_offered")
    assert step_tools == STEP_TOOL_WARNINGS.get(agent.name, 0), completed.stdout
