"""`keel test` on an agent whose tools come from an MCP server: the command connects the
server itself (as `keel run` does), runs the conversations and stops the server."""

from __future__ import annotations

import subprocess
import sys

from mcp_kit import AGENTS, clock_env


def test_keel_test_runs_conversations_against_a_real_mcp_server() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "keel", "test", str(AGENTS / "clock" / "tests")],
        capture_output=True,
        text=True,
        env=clock_env(),
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "2 passed, 0 failed"
