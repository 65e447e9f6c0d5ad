"""`keel chat` takes the same model specs as `keel run`: none, scripted:FILE, or the agent's
own model groups (which need their API key)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail"


def chat(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "keel", "chat", str(RETAIL), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_with_no_model_the_framework_signs_the_customer_in() -> None:
    result = chat("--model", "none", stdin="mia.moore8091@example.com\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "bot: You're signed in as Mia Moore. What can I do for you?" in result.stdout


def test_the_agents_own_models_need_their_key() -> None:
    result = chat(stdin="")
    assert result.returncode == 2
    assert "OPENAI_API_KEY not set" in result.stderr and "--model none" in result.stderr
