"""`keel run --reload` as a real server: an edited project is swapped in, a broken one is
not (its diagnostics are printed and the old definition answers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from served_kit import say, served
from typer.testing import CliRunner

from keel.cli.local_key import KEY_FILE
from keel.cli.main import app

GREETING = "Hi! I can change where a parcel is delivered."
EDITED = "Hello! Parcel Help here, reloaded."
AGAIN = "Hello again! Parcel Help, reloaded twice."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The support template written by `keel init` (no model needed for its greeting)."""
    target = tmp_path / "parcel-help"
    result = CliRunner().invoke(app, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert GREETING in (target / "responses.yml").read_text(encoding="utf-8")
    return target


def _greeting(base: str, key: str, conversation: str) -> str:

    reply = say(base, key, conversation, "/session_start")
    assert reply.status_code == 200, reply.text
    text = reply.json()["messages"][0]["text"]
    assert isinstance(text, str)
    return text


def _rewrite(project: Path, old: str, new: str) -> None:
    responses = project / "responses.yml"
    source = responses.read_text(encoding="utf-8")
    assert old in source
    responses.write_text(source.replace(old, new), encoding="utf-8")


def test_reload_swaps_an_edited_project_and_keeps_the_old_one_on_errors(
    project: Path, tmp_path: Path
) -> None:
    args = [str(project), "--model", "none", "--reload", "--log-level", "info"]
    with served(args, cwd=tmp_path) as server:
        assert "reload          on" in server.log()
        started = server.wait_for(r"keel\.server\.reload: watching .* \(revision (\w+)\)")
        key = (tmp_path / KEY_FILE).read_text(encoding="utf-8").strip()
        assert _greeting(server.base, key, "c1") == GREETING

        _rewrite(project, GREETING, EDITED)
        first = server.wait_for(r"reloaded .*parcel-help \(revision \w+\)", start=started)
        assert "changed: responses.yml" in server.log()
        assert _greeting(server.base, key, "c2") == EDITED
        served_revision = server.lines[first].rsplit("revision ", 1)[1].rstrip(")")

        responses = project / "responses.yml"
        good = responses.read_text(encoding="utf-8")
        responses.write_text(good.replace("responses:", "responses: [oops", 1), encoding="utf-8")
        failed = server.wait_for(r"has errors; still serving revision", start=first)
        assert f"still serving revision {served_revision}" in server.lines[failed]
        printed = "\n".join(server.lines[first:failed])
        assert re.search(r"ERROR keel\.server\.reload: responses\.yml:2: yaml\.syntax", printed)
        assert _greeting(server.base, key, "c3") == EDITED  # the old definition answers

        responses.write_text(good.replace(EDITED, AGAIN), encoding="utf-8")
        server.wait_for(r"reloaded .*parcel-help \(revision \w+\)", start=failed)
        assert _greeting(server.base, key, "c4") == AGAIN


def test_reload_refuses_several_workers(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(project), "--reload", "--workers", "2"])
    assert result.exit_code == 2
    assert "--reload serves with one worker" in result.output
