"""The runner's turn-loop extensions: `user: {text, metadata, cancel_on_tool}` and the checks
of model requests (`offered_tools`, `not_offered`, `prompt_contains`, `prompt_lacks`,
`request:`). Parsing and diagnostics, the pure checks, and the runner paths."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from conversation_doubles import FakeFactory, FakeHarness, FakeOutcome, write_agent

from keel.events.base import JsonValue
from keel.events.fold import ConversationState
from keel.llm import ModelRequest, ToolSchema, system_message, user_message
from keel.testing.conversation import Observation, check_one, run_test_file
from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.spec import AssertStep, RequestCheck, TextExpect, UserStep
from keel.testing.scripted import ScriptedModel


def _file(folder: Path, text: str) -> Path:
    agent = write_agent(folder / "agent")
    path = agent / "t.yml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _codes(path: Path) -> list[tuple[str, int | None]]:
    _, diagnostics = parse_test_file(path)
    return [(d.code, d.line) for d in diagnostics]


def test_user_mapping_and_request_checks_parse(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        tests:
          - name: t
            steps:
              - user: {text: go, metadata: {button_title: Go, n: 1}, cancel_on_tool: slow}
              - assert:
                  offered_tools: [a, b]
                  not_offered: hangup
                  prompt_contains: ["x", "re:^y"]
                  request: {number: 2, prompt_lacks: [z], offered_tools: [c]}
        """,
    )
    parsed, diagnostics = parse_test_file(path)
    assert diagnostics == [] and parsed is not None
    user, check = parsed.cases[0].steps
    assert user == UserStep(
        line=4, text="go", metadata=(("button_title", "Go"), ("n", 1)), cancel_on_tool="slow"
    )
    assert isinstance(check, AssertStep)
    assert check.checks == (
        RequestCheck(offered=("a", "b")),
        RequestCheck(not_offered=("hangup",)),
        RequestCheck(contains=(TextExpect(text="x"), TextExpect(text="^y", regex=True))),
        RequestCheck(number=2, lacks=(TextExpect(text="z"),), offered=("c",)),
    )


def test_malformed_user_and_request_checks_are_diagnostics(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        tests:
          - name: t
            steps:
              - user: {metadata: {a: 1}}
              - user: {text: hi, cancel: x}
              - user: {text: hi, metadata: [1]}
              - user: {text: hi, cancel_on_tool: 3}
              - assert: {offered_tools: {a: 1}}
              - assert: {request: {number: 0}}
              - assert: {request: {numbr: 1}}
              - assert: {request: []}
              - assert: {prompt_contains: ["re:("]}
              - assert: {not_offered: [1]}
        """,
    )
    assert _codes(path) == [
        ("test.step.user", 4),
        ("test.step.user", 5),
        ("test.step.user", 6),
        ("test.step.user", 7),
        ("test.assert.request", 8),
        ("test.assert.request", 9),
        ("test.assert.request", 10),
        ("test.assert.request", 11),
        ("test.regex.invalid", 12),
        ("test.assert.request", 13),
    ]


def _observation(*requests: ModelRequest) -> Observation:
    return Observation(events=(), state=ConversationState(), requests=requests)


REQUEST = ModelRequest(
    messages=(system_message("## Routing\nNo skill is active."), user_message("hello")),
    tools=(
        ToolSchema(name="activate", description="Start a skill. Targets: a, b", parameters={}),
        ToolSchema(name="listen", description="Wait.", parameters={}),
    ),
)


def test_request_checks_pass_and_fail_with_reasons() -> None:
    obs = _observation(ModelRequest(messages=(), tools=()), REQUEST)
    assert check_one(RequestCheck(offered=("listen", "activate")), obs) is None
    assert check_one(RequestCheck(not_offered=("hangup",)), obs) is None
    contains = (TextExpect(text="Targets: a, b"), TextExpect(text="^## Routing", regex=True))
    assert check_one(RequestCheck(contains=contains), obs) is None
    assert check_one(RequestCheck(lacks=(TextExpect(text="## Active"),)), obs) is None
    assert check_one(RequestCheck(number=1, offered=()), obs) is None

    wrong = check_one(RequestCheck(offered=("activate", "cannot_help")), obs)
    assert wrong == (
        "the last model request: offered ['activate', 'listen'] "
        "(missing ['cannot_help'], unexpected ['listen'])"
    )
    assert check_one(RequestCheck(not_offered=("listen",)), obs) == (
        "the last model request: offered ['listen'], which must not be offered"
    )
    assert check_one(RequestCheck(number=-2, contains=(TextExpect(text="hello"),)), obs) == (
        "model request -2: no 'hello' in the prompt"
    )
    assert check_one(RequestCheck(lacks=(TextExpect(text="hello"),)), obs) == (
        "the last model request: 'hello' is in the prompt"
    )
    assert check_one(RequestCheck(number=3), obs) == (
        "model request 3: the scripted model received only 2 request(s)"
    )
    assert check_one(RequestCheck(), _observation()) == (
        "the last model request: the scripted model received only 0 request(s)"
    )


def test_runner_checks_the_requests_of_the_run(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        tests:
          - name: ok
            steps:
              - model: Hi.
              - user: hello
              - assert: {offered_tools: [remember, lookup], prompt_contains: [hello]}
          - name: wrong
            steps:
              - model: Hi.
              - user: hello
              - assert: {not_offered: [lookup]}
        """,
    )
    lines = run_test_file(path, FakeFactory()).lines()
    assert lines[0].startswith("PASS ")
    assert lines[1].startswith("FAIL ") and "offered ['lookup'], which must not be" in lines[1]


@dataclass(kw_only=True)
class _MetadataHarness(FakeHarness):
    """Records the metadata of each message; cancels nothing."""

    seen: list[dict[str, JsonValue] | None] = field(default_factory=list)

    async def send(  # type: ignore[override]
        self, text: str, *, metadata: dict[str, JsonValue] | None = None
    ) -> FakeOutcome:
        self.seen.append(metadata)
        return await super().send(text)


def test_metadata_is_passed_only_when_given(tmp_path: Path) -> None:
    made: list[_MetadataHarness] = []

    def factory(agent: Path, model: ScriptedModel) -> _MetadataHarness:
        made.append(_MetadataHarness(agent=agent, model=model))
        return made[-1]

    path = _file(
        tmp_path,
        """\
        tests:
          - name: t
            steps:
              - model: [a, b]
              - user: {text: hi, metadata: {channel: web}}
              - user: again
        """,
    )
    assert run_test_file(path, factory).lines()[0].startswith("PASS ")
    assert made[0].seen == [{"channel": "web"}, None]


def test_cancel_on_tool_needs_a_harness_that_can_cancel(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        tests:
          - name: t
            steps:
              - user: {text: go, cancel_on_tool: slow}
        """,
    )
    line = run_test_file(path, FakeFactory()).lines()[0]
    assert line.startswith("FAIL ") and "cannot cancel a turn" in line


@dataclass(kw_only=True)
class _NeverCancels(FakeHarness):
    """Has `send_cancelling`, but the tool never starts, so the turn ends normally."""

    async def send_cancelling(self, text: str, *, on_tool: str) -> None:
        await self.send(text)


def test_cancel_on_tool_fails_when_the_turn_was_not_cancelled(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        tests:
          - name: t
            allow_leftover: true
            steps:
              - model: Done.
              - user: {text: go, cancel_on_tool: slow}
        """,
    )
    line = run_test_file(path, lambda a, m: _NeverCancels(agent=a, model=m)).lines()[0]
    assert line.startswith("FAIL ") and "not cancelled: tool 'slow' never started" in line
