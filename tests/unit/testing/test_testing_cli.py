"""`keel test`: the Typer command, its output and exit codes (with the fake harness)."""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest
import typer
from conversation_doubles import FakeFactory, write_agent
from typer.testing import CliRunner

import keel.cli.test_cmd as test_cmd


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A group, so the command is reached as `test`."""

    test_cmd.register(app)
    return app


@pytest.fixture
def fake_factory(monkeypatch: pytest.MonkeyPatch) -> FakeFactory:
    factory = FakeFactory()
    monkeypatch.setattr(test_cmd, "load_harness_factory", lambda: factory)
    return factory


def _write(folder: Path, text: str, name: str = "t.yml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


GOOD = (
    "tests:\n  - name: hi\n    steps:\n      - model: Hello\n      - user: hi\n      - bot: Hello\n"
)


def test_all_pass_exit_0(tmp_path: Path, fake_factory: FakeFactory) -> None:
    path = _write(write_agent(tmp_path / "a"), GOOD)
    result = CliRunner().invoke(_app(), ["test", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"PASS {path.as_posix()}::hi", "1 passed, 0 failed"]


def test_failure_exit_1(tmp_path: Path, fake_factory: FakeFactory) -> None:
    path = _write(write_agent(tmp_path / "a"), GOOD.replace("bot: Hello", "bot: Bye"))
    result = CliRunner().invoke(_app(), ["test", str(path)])
    assert result.exit_code == 1
    assert f"FAIL {path.as_posix()}::hi: step 3 (bot, line 6)" in result.output
    assert result.output.splitlines()[-1] == "0 passed, 1 failed"


def test_malformed_exit_2_without_traceback(tmp_path: Path, fake_factory: FakeFactory) -> None:
    path = _write(write_agent(tmp_path / "a"), "tests:\n  - name: x\n    steps: [{user: [1]}]\n")
    result = CliRunner().invoke(_app(), ["test", str(path)])
    assert result.exit_code == 2
    assert f"{path.as_posix()}:3: test.step.user:" in result.output
    assert "Traceback" not in result.output


def test_agent_option_and_name_filter(tmp_path: Path, fake_factory: FakeFactory) -> None:
    agent = write_agent(tmp_path / "agent")
    loose = tmp_path / "loose"
    loose.mkdir()
    path = _write(loose, GOOD + "  - name: other\n    steps: [{user: hi}]\n")
    result = CliRunner().invoke(_app(), ["test", str(path), "--agent", str(agent), "-k", "hi"])
    assert result.exit_code == 0, result.output
    assert fake_factory.made[0].agent == agent.resolve()
    assert len(fake_factory.made) == 1


def test_missing_path_is_a_usage_error(tmp_path: Path, fake_factory: FakeFactory) -> None:
    result = CliRunner().invoke(_app(), ["test", str(tmp_path / "nope.yml")])
    assert result.exit_code == 2


def test_factory_comes_from_keel_testing_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("keel.testing.harness")
    factory = FakeFactory()
    module.make_harness = factory  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "keel.testing.harness", module)
    assert test_cmd.load_harness_factory() is factory
