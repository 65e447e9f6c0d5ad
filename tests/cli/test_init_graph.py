"""`keel init` writes projects that validate and pass their tests; `keel graph` prints the
agent as a Mermaid flowchart (the real commands, in subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from keel.cli.init_cmd import template_files

ROOT = Path(__file__).resolve().parents[2]
GRAPH = ROOT / "tests" / "fixtures" / "graph"
TEMPLATES = ("support", "tools", "voice")


def _keel(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "keel", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize("template", TEMPLATES)
def test_init_writes_a_project_that_validates_and_passes_its_tests(
    template: str, tmp_path: Path
) -> None:
    project = tmp_path / "agent"
    made = _keel("init", str(project), "--template", template)
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"Created the {template} agent in {project}" in made.stdout
    written = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert written == sorted(template_files(template))
    assert {"README.md", "agent.yml", "integrations.yml"} <= set(written)
    assert not [p for p in written if "__pycache__" in p]
    checked = _keel("validate", str(project))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s)" in checked.stderr
    tested = _keel("test", str(project / "tests"))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    summary = tested.stdout.strip().splitlines()[-1]
    assert summary.endswith(" passed, 0 failed") and int(summary.split()[0]) >= 3, summary


def test_init_defaults_to_support_in_the_current_folder(tmp_path: Path) -> None:
    made = _keel("init", cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (tmp_path / "skills" / "redirect_parcel" / "skill.md").is_file()


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    refused = _keel("init", str(tmp_path))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"{tmp_path}: folder is not empty; keel init writes into a new or an empty folder"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert "Traceback" not in refused.stdout + refused.stderr


def test_init_refuses_an_unknown_template(tmp_path: Path) -> None:
    refused = _keel("init", str(tmp_path / "x"), "--template", "bank")
    assert refused.returncode == 2
    assert not (tmp_path / "x").exists()


def test_graph_prints_the_mermaid_flowchart(tmp_path: Path) -> None:
    shown = _keel("graph", str(GRAPH / "agent"), "--highlight", "orders.main.fetch")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (GRAPH / "expected.mmd").read_text(encoding="utf-8")


def test_graph_without_highlight_has_no_current_class() -> None:
    shown = _keel("graph", str(GRAPH / "agent"))
    assert shown.returncode == 0, shown.stderr
    expected = (GRAPH / "expected.mmd").read_text(encoding="utf-8").splitlines(keepends=True)
    assert shown.stdout == "".join(line for line in expected if "current" not in line)


def test_graph_refuses_an_unknown_step_and_a_broken_project(tmp_path: Path) -> None:
    unknown = _keel("graph", str(GRAPH / "agent"), "--highlight", "orders.main.nope")
    assert unknown.returncode == 2
    assert "no such step" in unknown.stderr
    broken = _keel("graph", str(tmp_path / "missing"))
    assert broken.returncode == 1
    assert "project.not_found" in broken.stderr
    assert "Traceback" not in broken.stdout + broken.stderr
