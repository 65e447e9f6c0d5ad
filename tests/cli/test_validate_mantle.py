"""`keel validate` loads what Mantle loads, warning where Keel doubts (the real command).

The agent under tests/conversations/agents/mantle uses patterns of real Mantle projects:
`if:` lines in a step's instructions, a session reference in backticks, a shared tool that
writes an entry another skill declares. Each was an error before; now the project is valid
and the doubtful ones are warnings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[1] / "conversations" / "agents" / "mantle"


def _validate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_the_mantle_patterns_load_with_warnings() -> None:
    result = _validate(AGENT, "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    found = [(d["code"], d["file"], d["line"], d["severity"]) for d in json.loads(result.stdout)]
    assert found == [
        (
            "skill.prose.quoted_session_reference",
            "skills/file_claim/skill.md",
            7,
            "warning",
        ),
        ("memory.write_not_writable", "tools/policies.py", 15, "warning"),
    ]
    text = _validate(AGENT)
    assert text.returncode == 0
    assert "write @memory.project.username" in text.stdout
    assert "while skill `get_quote` is active" in text.stdout


def test_a_key_declared_nowhere_is_still_an_error(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(AGENT, project)
    tools = project / "tools" / "policies.py"
    tools.write_text(tools.read_text().replace('"policy_name"', '"policy_nme"'))
    result = _validate(project, "--format", "json")
    assert result.returncode == 1
    errors = [(d["code"], d["line"]) for d in json.loads(result.stdout) if d["severity"] == "error"]
    assert errors == [("memory.undeclared_write", 15)]


def test_every_bad_line_of_step_instructions_is_reported_in_one_run(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(AGENT, project)
    skill = project / "skills" / "file_claim" / "skill.md"
    text = skill.read_text().replace(
        "      Then thank the caller.\n",
        "      Read back session.file_claim.policy_name.\n"
        "      Then read session.file_claim.policy_name again.\n"
        "      if: session.file_claim.nowhere\n"
        "        Never.\n",
    )
    skill.write_text(text)
    result = _validate(project, "--format", "json")
    assert result.returncode == 1
    errors = [(d["code"], d["line"]) for d in json.loads(result.stdout) if d["severity"] == "error"]
    assert errors == [
        ("skill.prose.bare_session_reference", 21),
        ("skill.prose.bare_session_reference", 22),
        ("memory.unknown_reference", 23),
    ]
