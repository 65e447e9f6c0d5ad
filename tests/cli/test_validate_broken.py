"""Every broken project under tests/fixtures/broken gives its expected diagnostic.

Each case folder holds `case.yml` (the expected `code`, `file`, `line`, and files to
`delete` from the base) and `files/`, laid over a copy of `_base`, a valid project.
The check runs the real command in a subprocess: exit 1, the diagnostic at the line,
and no traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BROKEN = Path(__file__).resolve().parents[1] / "fixtures" / "broken"
CASES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _materialise(name: str, target: Path) -> dict[str, object]:
    shutil.copytree(BROKEN / "_base", target)
    case = BROKEN / name
    spec: dict[str, object] = yaml.safe_load((case / "case.yml").read_text())
    for rel in spec.get("delete") or []:  # type: ignore[attr-defined]
        (target / rel).unlink()
    overlay = case / "files"
    if overlay.is_dir():
        shutil.copytree(overlay, target, dirs_exist_ok=True)
    return spec


def _validate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    return subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_base_project_is_valid(tmp_path: Path) -> None:
    shutil.copytree(BROKEN / "_base", tmp_path / "p")
    result = _validate(tmp_path / "p")
    assert result.returncode == 0, result.stdout + result.stderr


def test_there_are_at_least_25_distinct_cases() -> None:
    codes = set()
    for name in CASES:
        codes.add(yaml.safe_load((BROKEN / name / "case.yml").read_text())["code"])
    assert len(CASES) >= 25
    assert len(codes) >= 25


@pytest.mark.parametrize("name", CASES)
def test_broken_project(name: str, tmp_path: Path) -> None:
    project = tmp_path / name
    spec = _materialise(name, project)
    result = _validate(project, "--format", "json")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 1, result.stdout
    found = json.loads(result.stdout)
    wanted = {"code": spec["code"], "file": spec["file"], "line": spec["line"]}
    located = [{"code": d["code"], "file": d["file"], "line": d["line"]} for d in found]
    assert wanted in located, json.dumps(found, indent=1)
    text = _validate(project)
    assert "Traceback" not in text.stdout + text.stderr
    where = f"{spec['file']}:{spec['line']}" if spec["line"] is not None else spec["file"]
    assert f"{where}: {spec['code']}: " in text.stdout
