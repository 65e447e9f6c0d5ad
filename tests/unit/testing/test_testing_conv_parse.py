"""Parsing conversation test files: the valid format and every diagnostic, with its line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conversation_doubles import write_agent

from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.spec import (
    AssertStep,
    BotStep,
    CountCheck,
    EventPattern,
    EventsCheck,
    MemoryCheck,
    ModelStep,
    StepCheck,
    UserStep,
)


def _write(folder: Path, text: str, name: str = "t.yml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


VALID = """\
    agent: agent
    description: parcels
    tests:
      - name: reroute
        allow_leftover: true
        steps:
          - model:
              tool_calls: [{name: lookup, arguments: {id: PX-1}}]
          - model: [Found it., {content: second}]
          - user: yes
          - bot: Found it.
          - bot: {text: "re:^Pick", buttons: ["Yes", {title: No, payload: /no}], utter: utter_pick}
          - assert:
              memory: {lookup.id: PX-1, lookup.gone: null}
              events: [user_message, {kind: tool_executed, tool_name: lookup}]
              no_events: [{kind: bot_message, text: "re:(?i)error"}]
              active_skill: null
              step: {block: main, step: ask}
              state: idle
              stop_reason: end_turn
              bot_count: 2
              model_calls: 1
              model_requests_left: 0
              pending_confirmation: null
"""


def test_valid_file(tmp_path: Path) -> None:
    agent = write_agent(tmp_path / "agent")
    parsed, diagnostics = parse_test_file(_write(tmp_path, VALID))
    assert diagnostics == []
    assert parsed is not None
    assert parsed.agent == agent.resolve()
    [case] = parsed.cases
    assert (case.name, case.allow_leftover, case.line) == ("reroute", True, 4)
    model1, model2, user, bot1, bot2, check = case.steps
    assert isinstance(model1, ModelStep) and model1.replies[0].tool_calls[0].name == "lookup"
    assert isinstance(model2, ModelStep) and [r.text for r in model2.replies] == [
        "Found it.",
        "second",
    ]
    assert user == UserStep(line=10, text="yes")
    assert isinstance(bot1, BotStep) and bot1.expect.text is not None
    assert isinstance(bot2, BotStep) and bot2.expect.buttons is not None
    assert bot2.expect.text is not None and bot2.expect.text.regex
    assert [b.title.text for b in bot2.expect.buttons] == ["Yes", "No"]
    assert isinstance(check, AssertStep) and check.line == 13
    assert check.checks[0] == MemoryCheck(key="lookup.id", expected="PX-1")
    assert check.checks[1] == MemoryCheck(key="lookup.gone", expected=None, unset=True)
    assert check.checks[2] == EventsCheck(
        patterns=(
            EventPattern(kind="user_message"),
            EventPattern(kind="tool_executed", fields=(("tool_name", "lookup"),)),
        )
    )
    assert StepCheck(block="main", step="ask") in check.checks
    assert CountCheck(what="model_requests_left", expected=0) in check.checks
    assert len(check.checks) == 12


def test_nearest_ancestor_agent_and_default_agent(tmp_path: Path) -> None:
    project = write_agent(tmp_path / "proj")
    (project / "tests").mkdir()
    body = "tests:\n  - name: a\n    steps: [{user: hi}]\n"
    parsed, _ = parse_test_file(_write(project / "tests", body))
    assert parsed is not None and parsed.agent == project.resolve()
    other = write_agent(tmp_path / "other")
    loose = tmp_path / "loose"
    loose.mkdir()
    parsed, diagnostics = parse_test_file(_write(loose, body), default_agent=other)
    assert diagnostics == [] and parsed is not None and parsed.agent == other.resolve()


HEAD = "agent: a\ntests:\n  - name: a\n"
STEPS = HEAD + "    steps:\n"
"""Steps written after STEPS start on line 5."""


def _steps(*lines: str) -> str:
    return STEPS + "".join(f"      {line}\n" for line in lines)


BROKEN = [
    ("agent: nowhere\ntests: [{name: a, steps: [{user: hi}]}]\n", "test.agent.not_found", 1),
    ("tests: [{name: a, steps: [{user: hi}]}]\n", "test.agent.missing", 1),
    ("- user: hi\n", "test.file.not_mapping", 1),
    ("agent: a\ncases: []\ntests: [{name: a, steps: [{user: hi}]}]\n", "test.file.unknown_key", 2),
    ("agent: a\ntests: []\n", "test.file.no_tests", 2),
    ("agent: a\ntests:\n  - just a string\n", "test.case.invalid", 3),
    ("agent: a\ntests:\n  - steps: [{user: hi}]\n", "test.case.name", 3),
    (HEAD + "    step: []\n    steps: [{user: hi}]\n", "test.case.unknown_key", 4),
    (HEAD + "    steps: []\n", "test.case.steps", 4),
    (
        HEAD + "    steps: [{user: hi}]\n  - name: a\n    steps: [{user: hi}]\n",
        "test.case.duplicate_name",
        5,
    ),
    (HEAD + "    allow_leftover: sure\n    steps: [{user: hi}]\n", "test.case.allow_leftover", 4),
    (_steps("- user: hi", "  bot: hi"), "test.step.invalid", 5),
    (_steps("- say: hi"), "test.step.invalid", 5),
    (_steps("- user: [a, b]"), "test.step.user", 5),
    (_steps("- model:", "    txt: hi"), "test.step.model", 6),
    (_steps("- model: [ok, 3]"), "test.step.model", 5),
    (_steps("- bot: {txt: hi}"), "test.bot.invalid", 5),
    (_steps('- bot: "re:("'), "test.regex.invalid", 5),
    (_steps("- bot: {buttons: [{payload: x}]}"), "test.bot.buttons", 5),
    (_steps("- bot: {buttons: [Yes]}"), "test.text.invalid", 5),
    (_steps("- assert: {}"), "test.assert.invalid", 5),
    (_steps("- assert:", "    slots: {}"), "test.assert.unknown_key", 6),
    (_steps("- assert:", "    memory: [a]"), "test.assert.memory", 6),
    (_steps("- assert:", "    events:", "      - tool_execute"), "test.assert.event_kind", 7),
    (
        _steps("- assert:", "    events:", "      - kind: tool_executed", "        tool: x"),
        "test.assert.event_field",
        8,
    ),
    (
        _steps("- assert:", "    no_events:", "      - {kind: bot_message, text: 're:['}"),
        "test.regex.invalid",
        7,
    ),
    (_steps("- assert:", "    events: []"), "test.assert.events", 6),
    (_steps("- assert: {state: asleep}"), "test.assert.state", 5),
    (_steps("- assert: {stop_reason: done}"), "test.assert.stop_reason", 5),
    (_steps("- assert: {bot_count: -1}"), "test.assert.bot_count", 5),
    (_steps("- assert: {step: {frame: x}}"), "test.assert.step", 5),
    (_steps("- assert: {active_skill: [x]}"), "test.assert.active_skill", 5),
    (_steps("- assert: {memory: {a.b: 2001-01-01}}"), "test.assert.not_json", 5),
    ("agent: a\ntests:\n  - name: [unclosed\n", "yaml.syntax", 4),
]


@pytest.mark.parametrize(("text", "code", "line"), BROKEN, ids=[c for _, c, _ in BROKEN])
def test_malformed_files(tmp_path: Path, text: str, code: str, line: int) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    write_agent(loose / "a")
    parsed, diagnostics = parse_test_file(_write(loose, text), display="t.yml")
    assert parsed is None
    assert (code, line) in [(d.code, d.line) for d in diagnostics], diagnostics
    assert all(d.file == "t.yml" for d in diagnostics)


def test_unknown_event_kind_suggests_a_name(tmp_path: Path) -> None:
    write_agent(tmp_path / "a")
    text = "agent: a\ntests:\n  - name: a\n    steps:\n      - assert: {events: [tool_execute]}\n"
    _, diagnostics = parse_test_file(_write(tmp_path, text))
    assert "did you mean 'tool_executed'?" in diagnostics[0].message


def test_unreadable_file(tmp_path: Path) -> None:
    _, diagnostics = parse_test_file(tmp_path / "missing.yml")
    assert diagnostics[0].code == "test.file.unreadable"
