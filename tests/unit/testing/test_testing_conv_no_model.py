"""`model: none` in a conversation test file: the agent is served with no model."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conversation_doubles import write_agent

from keel.llm.none import has_model
from keel.testing.conversation.parse import parse_test_file
from keel.testing.scripted import AbsentModel


def _write(folder: Path, text: str) -> Path:
    write_agent(folder / "agent")
    path = folder / "t.yml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_model_none_marks_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        agent: agent
        model: none
        tests:
          - name: hello
            steps: [{user: hi}]
        """,
    )
    parsed, diagnostics = parse_test_file(path)
    assert not diagnostics
    assert parsed is not None and parsed.no_model


def test_a_file_without_the_key_has_a_model(tmp_path: Path) -> None:
    path = _write(tmp_path, "agent: agent\ntests:\n  - name: a\n    steps: [{user: hi}]\n")
    parsed, _ = parse_test_file(path)
    assert parsed is not None and not parsed.no_model


def test_another_value_and_model_steps_are_reported(tmp_path: Path) -> None:
    bad_value = _write(
        tmp_path, "agent: agent\nmodel: gpt\ntests:\n  - name: a\n    steps: [{user: hi}]\n"
    )
    parsed, diagnostics = parse_test_file(bad_value)
    assert parsed is None
    assert [(d.code, d.line) for d in diagnostics] == [("test.file.model", 2)]
    steps = _write(
        tmp_path,
        """\
        agent: agent
        model: none
        tests:
          - name: scripted
            steps: [{model: hello}, {user: hi}]
        """,
    )
    parsed, diagnostics = parse_test_file(steps)
    assert parsed is None
    assert [d.code for d in diagnostics] == ["test.file.model"]
    assert "has `model:` steps" in diagnostics[0].message


def test_the_absent_model_is_no_model() -> None:
    model = AbsentModel()
    assert not has_model(model)
    assert model.remaining == () and model.requests == ()
