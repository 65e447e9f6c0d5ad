"""Parsed conversation tests: files, cases, steps, and the checks of `bot:` and `assert:` steps.

Everything here is a plain value; `keel.testing.conversation.parse` builds them from YAML,
`keel.testing.conversation.assertions` evaluates the checks, and the runner plays steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from keel.events.base import JsonValue
from keel.testing.script_replies import ScriptedReply

REGEX_PREFIX = "re:"
"""A text written `re:<pattern>` is a regular expression (`re.search`), not exact text."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TextExpect:
    """Expected text: exact, or a regular expression searched in the actual text."""

    text: str
    regex: bool = False

    @classmethod
    def parse(cls, written: str) -> TextExpect:
        """`re:<pattern>` is a pattern, anything else exact text."""
        if written.startswith(REGEX_PREFIX):
            return cls(text=written[len(REGEX_PREFIX) :], regex=True)
        return cls(text=written)

    def matches(self, actual: str) -> bool:
        """Whether `actual` is the text (or contains a match of the pattern)."""
        if self.regex:
            return re.search(self.text, actual) is not None
        return actual == self.text

    def occurs_in(self, actual: str) -> bool:
        """Whether the text is part of `actual` (or the pattern matches somewhere in it)."""
        if self.regex:
            return re.search(self.text, actual) is not None
        return self.text in actual

    def describe(self) -> str:
        """As written in the test, quoted."""
        return f"re:{self.text!r}" if self.regex else repr(self.text)


@dataclass(frozen=True, kw_only=True, slots=True)
class ButtonExpect:
    """An expected button; a missing payload is not checked."""

    title: TextExpect
    payload: TextExpect | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class BotExpect:
    """What a `bot:` step expects of the next unchecked bot message (None: not checked)."""

    text: TextExpect | None = None
    buttons: tuple[ButtonExpect, ...] | None = None
    utter: str | None = None
    """The named response (`utter_*`) the message must come from."""
    source: str | None = None
    """The message's `response_source` (`verbatim`, `rephrased`, `llm`, `filler`, `plan`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EventPattern:
    """An expected event: its kind and a subset of its fields (see `matching.matches`)."""

    kind: str
    fields: tuple[tuple[str, JsonValue], ...] = ()

    def describe(self) -> str:
        """`kind field=value ...`, for messages."""
        parts = [self.kind, *(f"{name}={value!r}" for name, value in self.fields)]
        return " ".join(parts)


# --- checks of an `assert:` step ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryCheck:
    """`memory: {key: value}`; `unset` when the value was null (the key must have no value)."""

    key: str
    expected: JsonValue
    unset: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class EventsCheck:
    """`events:` the patterns match events of the run, in this order (gaps allowed)."""

    patterns: tuple[EventPattern, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class NoEventsCheck:
    """`no_events:` no event of the run matches any of the patterns."""

    patterns: tuple[EventPattern, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ActiveSkillCheck:
    """`active_skill:` the skill of the topmost skill frame (None: no skill active)."""

    skill_id: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class StepCheck:
    """`step:` the top frame is an ordered block at this block/step (`none`: no block on top)."""

    skill: str | None = None
    block: str | None = None
    step: str | None = None
    none: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusCheck:
    """`state:` the conversation status (`idle`, `running`, `paused`, `ended`, `failed`)."""

    status: str


@dataclass(frozen=True, kw_only=True, slots=True)
class StopReasonCheck:
    """`stop_reason:` why the last turn ended."""

    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CountCheck:
    """`bot_count`, `model_calls`, `model_requests_left`: a count equals `expected`."""

    what: str
    """The assert key, which names the count."""

    expected: int


@dataclass(frozen=True, kw_only=True, slots=True)
class PendingConfirmationCheck:
    """`pending_confirmation:` the tool waiting for confirmation (None: nothing pending)."""

    tool_name: str | None


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestCheck:
    """Checks of one request the scripted model received (`offered_tools`, `not_offered`,
    `prompt_contains`, `prompt_lacks`, `tier`, or all of them under `request:`)."""

    number: int = -1
    """Which request: 1-based from the start of the test; negative counts from the end."""

    offered: tuple[str, ...] | None = None
    """Exactly these tools were offered (order ignored); None: not checked."""

    not_offered: tuple[str, ...] = ()
    """None of these tools was offered."""

    contains: tuple[TextExpect, ...] = ()
    """Each text (or `re:` pattern) occurs in the request's messages."""

    lacks: tuple[TextExpect, ...] = ()
    """No text (or `re:` pattern) occurs in the request's messages."""

    tier: str | None = None
    """The request was made for this tier (`request.tier`: `router`, `default`, `reasoning`,
    ...), as chosen by the engine before it resolves to a model group; None: not checked."""


Check: TypeAlias = (
    MemoryCheck
    | EventsCheck
    | NoEventsCheck
    | ActiveSkillCheck
    | StepCheck
    | StatusCheck
    | StopReasonCheck
    | CountCheck
    | PendingConfirmationCheck
    | RequestCheck
)
"""One check of an `assert:` step."""


# --- steps, cases, files ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class UserStep:
    """`user:` send this text (typed text or a button payload) as one turn."""

    line: int | None
    text: str
    metadata: tuple[tuple[str, JsonValue], ...] | None = None
    """Channel metadata sent with the message (`user: {text, metadata}`)."""

    cancel_on_tool: str | None = None
    """Cancel the turn as soon as this tool starts running (`user: {text, cancel_on_tool}`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelStep:
    """`model:` queue these replies in the scripted model now (one, or a list)."""

    line: int | None
    replies: tuple[ScriptedReply, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class BotStep:
    """`bot:` the next unchecked bot message of the run is this."""

    line: int | None
    expect: BotExpect


@dataclass(frozen=True, kw_only=True, slots=True)
class AssertStep:
    """`assert:` every check holds now."""

    line: int | None
    checks: tuple[Check, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ConversationStep:
    """`conversation:` go on in another conversation with the same engine and store (so
    with the same plan cache): later steps send to, check and assert on that one."""

    line: int | None
    conversation_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class FeedbackStep:
    """`feedback:` explicit feedback on the current conversation's last turn (`approve`,
    `reject` or `repeat`), as `POST .../turns/{turn_id}/feedback` gives it: how a test
    promotes a recorded plan so another conversation is served from it."""

    line: int | None
    signal: str


Step: TypeAlias = UserStep | ModelStep | BotStep | AssertStep | ConversationStep | FeedbackStep


def step_label(step: Step) -> str:
    """The step's key in the file: `user`, `model`, `bot`, `assert`, `conversation` or
    `feedback`."""
    labels: dict[type, str] = {
        UserStep: "user",
        ModelStep: "model",
        BotStep: "bot",
        AssertStep: "assert",
        ConversationStep: "conversation",
        FeedbackStep: "feedback",
    }
    return labels[type(step)]


@dataclass(frozen=True, kw_only=True, slots=True)
class ConversationCase:
    """One test: a name and its steps, played against a fresh harness."""

    name: str
    line: int | None
    steps: tuple[Step, ...]
    allow_leftover: bool = False
    """Scripted replies left at the end do not fail the test."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ConversationFile:
    """A parsed test file."""

    path: Path
    display: str
    """How results name the file (as given on the command line, forward slashes)."""

    agent: Path
    """The agent project the tests run against (resolved)."""

    cases: tuple[ConversationCase, ...]
    no_model: bool = False
    """`model: none`: the agent is served with no model, as `keel run --model none` serves
    it (offline router, typed extractors, fixed replies); the file has no `model:` steps."""
