"""The conversation-test runner, driven against `FakeHarness` (a test double, see
conversation_doubles.py): passing runs, each kind of failure, fresh harnesses, files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conversation_doubles import FakeFactory, write_agent

from keel.errors import DefinitionError
from keel.source.diagnostics import diag
from keel.testing.conversation import run_paths, run_test_file
from keel.testing.scripted import ScriptedModel


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An agent folder with a tests/ folder inside; test files find the agent above them."""
    folder = write_agent(tmp_path / "proj")
    (folder / "tests").mkdir()
    return folder


def _file(project: Path, text: str, name: str = "t.yml") -> Path:
    path = project / "tests" / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _lines(path: Path, factory: FakeFactory | None = None) -> list[str]:
    return run_test_file(path, factory or FakeFactory()).lines()


PASSING = """\
    tests:
      - name: remembers and answers
        steps:
          - model: {tool_calls: [{name: remember, arguments: {order.id: PX-1}}]}
          - model: Noted PX-1.
          - user: my order is PX-1
          - bot: "re:Noted PX-\\\\d"
          - assert:
              memory: {order.id: PX-1, order.other: null}
              events:
                - user_message
                - {kind: tool_executed, tool_name: remember, tool_call_id: call_1}
                - {kind: bot_message, text: Noted PX-1.}
              no_events: [{kind: tool_executed, tool_name: lookup}]
              stop_reason: end_turn
              state: idle
              bot_count: 1
              model_calls: 2
              model_requests_left: 0
              active_skill: null
      - name: buttons
        steps:
          - model: Anything else?
          - user: menu
          - bot: {text: Pick one, buttons: [{title: "Yes", payload: /yes}, "No"]}
          - bot: Anything else?
"""


def test_passing_file(project: Path) -> None:
    path = _file(project, PASSING)
    result = run_test_file(path, FakeFactory())
    assert result.diagnostics == ()
    assert result.lines() == [
        f"PASS {path.as_posix()}::remembers and answers",
        f"PASS {path.as_posix()}::buttons",
    ]


def test_bot_mismatch_names_step_line_expected_actual_and_last_events(project: Path) -> None:
    path = _file(
        project,
        """\
        tests:
          - name: greets
            steps:
              - model: Hi there
              - user: hello
              - bot: Hello!
        """,
    )
    [result] = run_test_file(path, FakeFactory()).results
    assert not result.passed
    assert result.reason == (
        "step 3 (bot, line 6): bot message #1: expected text 'Hello!', got 'Hi there'"
    )
    assert result.details[0] == "last 6 of 6 events:"
    assert "#3 user_message text='hello'" in result.details[3]
    lines = result.lines()
    assert lines[0].startswith(f"FAIL {path.as_posix()}::greets: step 3")
    assert lines[1].startswith("    last 6")


def test_all_failed_checks_of_a_step_are_reported(project: Path) -> None:
    path = _file(
        project,
        """\
        tests:
          - name: t
            steps:
              - model: ok
              - user: hi
              - assert: {bot_count: 2, state: paused}
        """,
    )
    [result] = run_test_file(path, FakeFactory()).results
    assert result.reason == "step 3 (assert, line 6): bot_count: expected 2, got 1"
    assert result.details[0] == "state: expected 'paused', got 'idle'"


def test_extra_bot_step_fails_when_the_bot_said_less(project: Path) -> None:
    path = _file(
        project,
        "tests:\n  - name: t\n    steps:\n      - model: one\n      - user: hi\n"
        "      - bot: one\n      - bot: two\n",
    )
    [result] = run_test_file(path, FakeFactory()).results
    assert result.reason == "step 4 (bot, line 7): expected bot message #2, but the bot sent only 1"


def test_model_steps_queue_in_file_order_across_turns(project: Path) -> None:
    # Three replies queued before the first message: the first turn uses two (a tool call,
    # then text); the second turn uses the third.
    path = _file(
        project,
        """\
        tests:
          - name: t
            steps:
              - model: {tool_calls: [{name: lookup}]}
              - model: [Found., Second turn.]
              - user: one
              - assert: {model_requests_left: 1, model_calls: 2}
              - user: two
              - bot: Found.
              - bot: Second turn.
        """,
    )
    assert run_test_file(path, FakeFactory()).results[0].passed


def test_leftover_replies_fail_unless_allowed(project: Path) -> None:
    body = """\
        tests:
          - name: strict
            steps:
              - model: [used, unused]
              - user: hi
          - name: lenient
            allow_leftover: true
            steps:
              - model: [used, unused]
              - user: hi
        """
    strict, lenient = run_test_file(_file(project, body), FakeFactory()).results
    assert strict.reason == "end of test: 1 scripted reply(ies) left over: text 'unused'"
    assert lenient.passed


def test_exhausted_script_raised_by_the_engine_fails_the_step(project: Path) -> None:
    path = _file(project, "tests:\n  - name: t\n    steps:\n      - user: hi\n")
    [result] = run_test_file(path, FakeFactory()).results
    assert result.reason is not None
    assert result.reason.startswith(
        "step 1 (user, line 4): the engine raised ScriptExhausted: the scripted model has no "
        "reply left for model request #1"
    )
    assert "last user message: 'hi'" in result.reason
    assert "tools offered: remember, lookup" in result.reason


def test_exhausted_script_swallowed_by_the_engine_still_fails(project: Path) -> None:
    path = _file(project, "tests:\n  - name: t\n    steps:\n      - user: hi\n")
    [result] = run_test_file(path, FakeFactory(swallow_model_errors=True)).results
    assert result.reason is not None
    assert result.reason.startswith("step 1 (user, line 4): the scripted model has no reply left")


def test_each_test_gets_a_fresh_harness_and_model(project: Path) -> None:
    path = _file(
        project,
        """\
        tests:
          - name: writes
            steps:
              - model: [{tool_calls: [{name: remember, arguments: {a.b: 1}}]}, done]
              - user: hi
              - assert: {memory: {a.b: 1}}
          - name: starts clean
            steps:
              - assert: {memory: {a.b: null}, model_calls: 0, bot_count: 0}
        """,
    )
    factory = FakeFactory()
    assert all(r.passed for r in run_test_file(path, factory).results)
    first, second = factory.made
    assert first is not second and first.model is not second.model
    assert first.agent == project.resolve()
    assert first.closed and second.closed


def test_invalid_agent_makes_the_file_malformed(project: Path) -> None:
    def broken(agent: Path, model: ScriptedModel) -> FakeFactory:
        raise DefinitionError([diag("agent.persona.missing", "agent.yml", 1, "no persona")])

    path = _file(project, "tests:\n  - name: t\n    steps:\n      - user: hi\n")
    result = run_test_file(path, broken)  # type: ignore[arg-type]
    assert result.malformed and result.results == ()
    assert [d.code for d in result.diagnostics] == ["test.agent.invalid", "agent.persona.missing"]
    assert result.diagnostics[1].file.endswith("proj/agent.yml")


def test_other_harness_start_failures_fail_the_test(project: Path) -> None:
    def broken(agent: Path, model: ScriptedModel) -> FakeFactory:
        raise RuntimeError("boom")

    path = _file(project, "tests:\n  - name: t\n    steps:\n      - user: hi\n")
    [result] = run_test_file(path, broken).results  # type: ignore[arg-type]
    assert result.reason == "cannot start the harness: RuntimeError: boom"


def test_name_filter(project: Path) -> None:
    result = run_test_file(_file(project, PASSING), FakeFactory(), name_filter="butt")
    assert [r.name for r in result.results] == ["buttons"]


def test_run_paths_finds_test_files_and_summarises(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    _file(project, PASSING, "a.yml")
    _file(
        project,
        "tests:\n  - name: bad\n    steps:\n      - model: x\n      - user: hi\n      - bot: y\n",
        "b.yaml",
    )
    (project / "tests" / "notes.yml").write_text("title: not a test\n", encoding="utf-8")
    hidden = project / "tests" / ".cache"
    hidden.mkdir()
    (hidden / "c.yml").write_text("tests: []\n", encoding="utf-8")
    summary = run_paths([Path("tests")], FakeFactory())
    assert [f.file for f in summary.files] == ["tests/a.yml", "tests/b.yaml"]
    assert (summary.passed, summary.failed, summary.exit_code) == (2, 1, 1)
    lines = summary.lines()
    assert lines[0] == "PASS tests/a.yml::remembers and answers"
    assert lines[2].startswith("FAIL tests/b.yaml::bad: step 3 (bot, line 6)")
    assert lines[-1] == "2 passed, 1 failed"


def test_run_paths_malformed_file_exits_2(project: Path) -> None:
    good = _file(project, PASSING, "a.yml")
    bad = _file(project, "tests:\n  - name: t\n    steps:\n      - shout: hi\n", "b.yml")
    summary = run_paths([good, bad], FakeFactory())
    assert (summary.passed, summary.failed, summary.malformed, summary.exit_code) == (2, 0, 1, 2)
    assert f"{bad.as_posix()}:4: test.step.invalid:" in "\n".join(summary.lines())
    assert summary.final_line() == "2 passed, 0 failed, 1 malformed file(s)"


def test_run_paths_with_nothing_to_run_exits_2(tmp_path: Path) -> None:
    summary = run_paths([tmp_path], FakeFactory())
    assert summary.exit_code == 2
    assert summary.final_line() == "0 passed, 0 failed (no conversation test files found)"


def test_all_passing_exits_0(project: Path) -> None:
    assert run_paths([_file(project, PASSING)], FakeFactory()).exit_code == 0
