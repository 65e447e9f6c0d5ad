"""Mantle runtime patterns of real projects (`tests/compat_runtime/*.yml`): failure payloads,
write-once re-writes and refused `set_memory` steps, control messages, blocking tools.

Each YAML file runs in process through the runner API; every agent here but `blocking`
(which is meant to warn) passes `keel validate` with no warning but `bank`'s two
`tool.step_tool_offered`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from keel.testing.conversation import run_test_file
from keel.testing.harness import make_harness

HERE = Path(__file__).resolve().parent
TEST_FILES = sorted(HERE.glob("*.yml"))
AGENTS = sorted(p.parent for p in (HERE / "agents").glob("*/agent.yml"))
WARNS = {"blocking", "blocking_timeout"}  # they warn tool.blocking_io_in_async


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_conversation_file_passes(path: Path) -> None:
    result = run_test_file(path, make_harness)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert result.results, f"{path.name} ran no test"
    assert result.failed == 0, lines


@pytest.mark.parametrize("agent", AGENTS, ids=[p.name for p in AGENTS])
def test_agent_validates(agent: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(agent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    if agent.name not in WARNS:
        # `bank`'s step tools are offered to the model too, with no gate (Mantle's
        # behaviour, which its tests rely on): `tool.step_tool_offered` only.
        step_tools = completed.stdout.count("tool.step_tool_offered")
        assert step_tools == (2 if agent.name == "bank" else 0), completed.stdout
        assert f"0 error(s), {step_tools} warning(s)" in completed.stderr, completed.stderr
