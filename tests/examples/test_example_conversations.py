"""The example agent's own conversation tests pass under `keel test`, run as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_conversation_tests_pass() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "keel", "test", str(ROOT / "examples" / "support" / "tests")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    passed = int(summary.split()[0])
    assert passed >= 4 and summary.endswith("0 failed"), summary


def test_example_agent_validates() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(ROOT / "examples" / "support")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_airline_policy_conversation_tests_pass() -> None:
    """The airline agent's policy tests: sign-in, confirmations and the tools' refusals."""
    result = subprocess.run(
        [sys.executable, "-m", "keel", "test", str(ROOT / "examples" / "airline" / "tests")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert int(summary.split()[0]) >= 6 and summary.endswith("0 failed"), summary
