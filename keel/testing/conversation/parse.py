"""Reading a conversation test file into a `ConversationFile`, or diagnostics.

A malformed file yields diagnostics (`file:line: code: message`) and no tests: the runner
reports it and runs nothing from it. Texts under `user:`, `bot:`, `text:`... are kept
literal (`user: yes` sends "yes"; see `keel.testing.yamltext`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from keel.events.base import JsonValue, NotJsonValue, freeze_json
from keel.source.diagnostics import Diagnostic
from keel.source.yaml import load_yaml, own_line
from keel.testing.conversation.discover import resolve_agent
from keel.testing.conversation.parse_checks import parse_assert, parse_bot
from keel.testing.conversation.sink import Sink, line_in
from keel.testing.conversation.spec import (
    AssertStep,
    BotStep,
    ConversationCase,
    ConversationFile,
    ConversationStep,
    FeedbackStep,
    ModelStep,
    Step,
    UserStep,
)
from keel.testing.script_replies import InvalidReply, ScriptedReply, parse_reply
from keel.testing.yamltext import restore_texts

_FILE_KEYS = frozenset({"agent", "tests", "description", "model"})
_CASE_KEYS = frozenset({"name", "steps", "allow_leftover", "description"})
_STEP_KEYS = ("user", "model", "bot", "assert", "conversation", "feedback")
_SIGNALS = ("approve", "reject", "repeat")
_USER_KEYS = ("text", "metadata", "cancel_on_tool")


def parse_test_file(
    path: Path, *, display: str | None = None, default_agent: Path | None = None
) -> tuple[ConversationFile | None, list[Diagnostic]]:
    """Parse the test file at `path`; the file is None when there are diagnostics."""
    sink = Sink(display or path.as_posix())
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        sink.error("test.file.unreadable", None, f"cannot read the file: {exc}")
        return None, sink.diagnostics
    data, diagnostics = load_yaml(text, sink.file)
    if diagnostics:
        return None, diagnostics
    restore_texts(data, text)
    parsed = _document(data, path, default_agent, sink)
    return (None if sink.diagnostics else parsed), sink.diagnostics


def _document(
    data: object, path: Path, default_agent: Path | None, sink: Sink
) -> ConversationFile | None:
    if not isinstance(data, Mapping):
        sink.error("test.file.not_mapping", 1, "a test file is a mapping with a `tests:` list")
        return None
    for key in data:
        if key not in _FILE_KEYS:
            known = ", ".join(sorted(_FILE_KEYS))
            sink.error(
                "test.file.unknown_key", line_in(data, key, 1), f"unknown key {key!r} ({known})"
            )
    agent = resolve_agent(path, data.get("agent"), line_in(data, "agent", 1), default_agent, sink)
    raw_tests = data.get("tests")
    line = line_in(data, "tests", 1)
    if not isinstance(raw_tests, Sequence) or isinstance(raw_tests, str) or not raw_tests:
        sink.error("test.file.no_tests", line, "`tests:` must be a non-empty list of tests")
        return None
    cases = _cases(raw_tests, line, sink)
    no_model = _no_model(data, cases, sink)
    if agent is None:
        return None
    return ConversationFile(
        path=path, display=sink.file, agent=agent, cases=cases, no_model=no_model
    )


def _no_model(data: Mapping[object, object], cases: Sequence[ConversationCase], sink: Sink) -> bool:
    """`model: none` (the only value): the tests run with no model, so no `model:` steps."""
    if "model" not in data:
        return False
    if data["model"] != "none":
        sink.error(
            "test.file.model",
            line_in(data, "model", 1),
            "`model:` of a test file can only be `none` (the agent served with no model)",
        )
        return False
    for case in cases:
        if any(isinstance(step, ModelStep) for step in case.steps):
            sink.error(
                "test.file.model",
                case.line,
                f"test {case.name!r} has `model:` steps, but the file says `model: none`",
            )
    return True


def _cases(raw: Sequence[object], line: int | None, sink: Sink) -> tuple[ConversationCase, ...]:
    cases: list[ConversationCase] = []
    names: set[str] = set()
    for index, item in enumerate(raw):
        case = _case(item, line_in(raw, index, line), sink)
        if case is None:
            continue
        if case.name in names:
            sink.error("test.case.duplicate_name", case.line, f"two tests are named {case.name!r}")
        names.add(case.name)
        cases.append(case)
    return tuple(cases)


def _case(item: object, line: int | None, sink: Sink) -> ConversationCase | None:
    if not isinstance(item, Mapping):
        sink.error("test.case.invalid", line, "a test is a mapping with `name:` and `steps:`")
        return None
    for key in item:
        if key not in _CASE_KEYS:
            known = ", ".join(sorted(_CASE_KEYS))
            sink.error(
                "test.case.unknown_key", line_in(item, key, line), f"unknown key {key!r} ({known})"
            )
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        sink.error("test.case.name", line, "a test needs a `name:` (text)")
        return None
    allow_leftover = item.get("allow_leftover", False)
    if not isinstance(allow_leftover, bool):
        sink.error(
            "test.case.allow_leftover",
            line_in(item, "allow_leftover", line),
            "allow_leftover is true or false",
        )
    raw_steps = item.get("steps")
    steps_line = line_in(item, "steps", line)
    if not isinstance(raw_steps, Sequence) or isinstance(raw_steps, str) or not raw_steps:
        sink.error("test.case.steps", steps_line, f"test {name!r} needs a non-empty `steps:` list")
        return None
    steps = [
        _step(step, line_in(raw_steps, i, steps_line), sink) for i, step in enumerate(raw_steps)
    ]
    return ConversationCase(
        name=name,
        line=line,
        steps=tuple(step for step in steps if step is not None),
        allow_leftover=allow_leftover is True,
    )


def _step(item: object, line: int | None, sink: Sink) -> Step | None:
    if not isinstance(item, Mapping) or len(item) != 1 or next(iter(item)) not in _STEP_KEYS:
        sink.error(
            "test.step.invalid",
            own_line(item, line),
            "a step is one of `user:`, `model:`, `bot:`, `assert:`, `conversation:`, `feedback:`",
        )
        return None
    key, value = next(iter(item.items()))
    if key == "conversation":
        if not isinstance(value, str) or not value.strip():
            sink.error("test.step.conversation", line, "conversation takes an id (text)")
            return None
        return ConversationStep(line=line, conversation_id=value.strip())
    if key == "feedback":
        if value not in _SIGNALS:
            sink.error("test.step.feedback", line, "feedback is approve, reject or repeat")
            return None
        return FeedbackStep(line=line, signal=str(value))
    if key == "user":
        return _user(value, line, sink)
    if key == "model":
        replies = _replies(value, line, sink)
        return None if replies is None else ModelStep(line=line, replies=replies)
    if key == "bot":
        expect = parse_bot(value, line, sink)
        return None if expect is None else BotStep(line=line, expect=expect)
    checks = parse_assert(value, line, sink)
    return None if checks is None else AssertStep(line=line, checks=checks)


def _user(value: object, line: int | None, sink: Sink) -> UserStep | None:
    """`user: <text>` or `user: {text, metadata?, cancel_on_tool?}`."""
    if isinstance(value, str):
        return UserStep(line=line, text=value)
    if not isinstance(value, Mapping) or not isinstance(value.get("text"), str):
        sink.error("test.step.user", line, "user takes the text to send (quote it), or {text: ...}")
        return None
    errors = len(sink.diagnostics)
    for key in value:
        if key not in _USER_KEYS:
            known = ", ".join(_USER_KEYS)
            sink.error(
                "test.step.user", line_in(value, key, line), f"unknown key {key!r} ({known})"
            )
    metadata = value.get("metadata")
    frozen: tuple[tuple[str, JsonValue], ...] | None = None
    if metadata is not None:
        if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
            sink.error("test.step.user", line_in(value, "metadata", line), "metadata is a mapping")
        else:
            try:
                frozen = tuple((str(k), freeze_json(v)) for k, v in metadata.items())
            except NotJsonValue as exc:
                sink.error("test.step.user", line_in(value, "metadata", line), f"not JSON: {exc}")
    tool = value.get("cancel_on_tool")
    if tool is not None and (not isinstance(tool, str) or not tool):
        sink.error("test.step.user", line_in(value, "cancel_on_tool", line), "a tool name")
    if len(sink.diagnostics) > errors:
        return None
    return UserStep(line=line, text=value["text"], metadata=frozen, cancel_on_tool=tool)


def _replies(value: object, line: int | None, sink: Sink) -> tuple[ScriptedReply, ...] | None:
    items = value if isinstance(value, Sequence) and not isinstance(value, str) else [value]
    try:
        return tuple(parse_reply(item) for item in items)
    except InvalidReply as exc:
        sink.error("test.step.model", exc.line or line, exc.message)
        return None
