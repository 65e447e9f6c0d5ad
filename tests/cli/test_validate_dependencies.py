"""`keel validate` reports the project's own Python dependencies (requirements.txt,
pyproject.toml) that are not installed in Keel's environment, with the install command;
run as the real command in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

AGENT = Path(__file__).resolve().parents[1] / "project_compat" / "agents" / "own_dependencies"


def _validate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(project), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_each_declared_dependency_is_checked() -> None:
    completed = _validate(AGENT, "--format", "json")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    found = [(d["file"], d["line"], d["code"], d["severity"]) for d in json.loads(completed.stdout)]
    assert found == [
        ("pyproject.toml", 6, "project.dependency.missing", "warning"),
        ("requirements.txt", 3, "project.dependency.missing", "warning"),
        ("requirements.txt", 4, "project.dependency.version_mismatch", "warning"),
        ("requirements.txt", 5, "project.dependency.engine", "info"),
        ("requirements.txt", 8, "project.dependency.unchecked", "info"),
        ("requirements.txt", 9, "project.dependency.unreadable", "warning"),
    ]


def test_the_warning_gives_the_install_command_for_keels_environment() -> None:
    completed = _validate(AGENT)
    assert completed.returncode == 0
    lines = completed.stdout.splitlines()
    missing = next(line for line in lines if "keel-fixture-absent-dependency" in line)
    assert missing.startswith("requirements.txt:3: project.dependency.missing:")
    assert f"{sys.executable} -m pip install -r {AGENT / 'requirements.txt'}" in missing
    assert missing.endswith("(warning)")
    other = next(line for line in lines if "keel-fixture-absent-other" in line)
    assert f"{sys.executable} -m pip install 'keel-fixture-absent-other>=2'" in other
    assert "Traceback" not in completed.stderr
    pinned = next(line for line in lines if line.startswith("requirements.txt:4:"))
    assert "Keel itself requires numpy" in pinned and "pip install" not in pinned


def test_a_project_without_declared_dependencies_gets_none_of_these(tmp_path: Path) -> None:
    shutil.copytree(AGENT, tmp_path / "agent")
    (tmp_path / "agent" / "requirements.txt").unlink()
    (tmp_path / "agent" / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    completed = _validate(tmp_path / "agent", "--format", "json")
    assert completed.returncode == 0
    assert json.loads(completed.stdout) == []


def test_an_unreadable_pyproject_is_a_warning_not_a_traceback(tmp_path: Path) -> None:
    shutil.copytree(AGENT, tmp_path / "agent")
    (tmp_path / "agent" / "requirements.txt").unlink()
    (tmp_path / "agent" / "pyproject.toml").write_text("[project\n")
    completed = _validate(tmp_path / "agent", "--format", "json")
    assert completed.returncode == 0
    found = [(d["file"], d["code"]) for d in json.loads(completed.stdout)]
    assert found == [("pyproject.toml", "project.dependency.unreadable")]
