"""Pure checks of a run's observable results: bot messages, events, state, model counts.

Each check returns None when it holds and a one-line reason when it does not, so they are
tested without an engine and the runner only adds where (step, line) it failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from keel.events.base import EventBase, to_plain
from keel.events.fold import ConversationState
from keel.events.model import BotMessage
from keel.llm.port import ModelRequest
from keel.testing.conversation.matching import (
    describe_event,
    event_matches,
    find_in_order,
    same_json,
)
from keel.testing.conversation.spec import (
    ActiveSkillCheck,
    BotExpect,
    Check,
    CountCheck,
    EventsCheck,
    MemoryCheck,
    NoEventsCheck,
    PendingConfirmationCheck,
    RequestCheck,
    StatusCheck,
    StepCheck,
    StopReasonCheck,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    """What a test can see after some steps."""

    events: tuple[EventBase, ...]
    """Every event of the run so far."""

    state: ConversationState
    stop_reason: str | None = None
    """Why the last turn ended (None before the first `user:` step)."""

    model_calls: int = 0
    """Requests the scripted model received."""

    replies_left: int = 0
    """Scripted replies not yet used."""

    requests: tuple[ModelRequest, ...] = ()
    """Every request the scripted model received, in order."""

    @property
    def bot_messages(self) -> tuple[BotMessage, ...]:
        """The bot messages of the run, in order."""
        return tuple(event for event in self.events if isinstance(event, BotMessage))


def check_bot(expect: BotExpect, message: BotMessage | None, number: int) -> str | None:
    """Check bot message number `number` (1-based) of the run; None means there is none."""
    if message is None:
        return f"expected bot message #{number}, but the bot sent only {number - 1}"
    where = f"bot message #{number}"
    if expect.text is not None and not expect.text.matches(message.text):
        return f"{where}: expected text {expect.text.describe()}, got {message.text!r}"
    if expect.utter is not None and message.utter_action != expect.utter:
        return f"{where}: expected response {expect.utter!r}, got {message.utter_action!r}"
    if expect.source is not None and message.response_source != expect.source:
        detail = _fallback_detail(message)
        return (
            f"{where}: expected source {expect.source!r}, got {message.response_source!r}{detail}"
        )
    if expect.buttons is not None:
        return _check_buttons(expect, message, where)
    return None


def _fallback_detail(message: BotMessage) -> str:
    """Why a rephrase fell back to the verbatim text, when it did (for the failure message)."""
    record = message.metadata.get("rephrase_fallback")
    if isinstance(record, Mapping):
        return f" ({record.get('code')}: {record.get('message')})"
    return ""


def _check_buttons(expect: BotExpect, message: BotMessage, where: str) -> str | None:
    assert expect.buttons is not None
    actual = [f"{b.title!r}->{b.payload!r}" for b in message.buttons]
    problem = len(expect.buttons) != len(message.buttons)
    for want, got in zip(expect.buttons, message.buttons, strict=False):
        if not want.title.matches(got.title):
            problem = True
        elif want.payload is not None and not want.payload.matches(got.payload):
            problem = True
    if not problem:
        return None
    wanted = [
        want.title.describe() + ("" if want.payload is None else f"->{want.payload.describe()}")
        for want in expect.buttons
    ]
    return f"{where}: expected buttons [{', '.join(wanted)}], got [{', '.join(actual)}]"


def run_checks(checks: tuple[Check, ...], observation: Observation) -> tuple[str, ...]:
    """The reasons of every failing check (empty when all hold)."""
    reasons = (check_one(check, observation) for check in checks)
    return tuple(reason for reason in reasons if reason is not None)


def check_one(check: Check, observation: Observation) -> str | None:
    """Evaluate one check."""
    return _CHECKERS[type(check)](check, observation)


def _memory(check: MemoryCheck, obs: Observation) -> str | None:
    memory = obs.state.memory
    if check.unset:
        if check.key in memory:
            return f"memory {check.key}: expected no value, got {to_plain(memory[check.key])!r}"
        return None
    if check.key not in memory:
        return f"memory {check.key}: expected {to_plain(check.expected)!r}, but it has no value"
    if not same_json(memory[check.key], check.expected):
        actual = to_plain(memory[check.key])
        return f"memory {check.key}: expected {to_plain(check.expected)!r}, got {actual!r}"
    return None


def _events(check: EventsCheck, obs: Observation) -> str | None:
    found = find_in_order(obs.events, check.patterns)
    if len(found) == len(check.patterns):
        return None
    missing = check.patterns[len(found)]
    after = f" after event #{found[-1] + 1}" if found else ""
    same_kind = [
        describe_event(event, index)
        for index, event in enumerate(obs.events)
        if event.kind == missing.kind
    ]
    seen = "; ".join(same_kind[-3:]) if same_kind else "none"
    return (
        f"events: no `{missing.describe()}`{after} "
        f"(matched {len(found)} of {len(check.patterns)}; {missing.kind} events: {seen})"
    )


def _no_events(check: NoEventsCheck, obs: Observation) -> str | None:
    for index, event in enumerate(obs.events):
        for pattern in check.patterns:
            if event_matches(event, pattern):
                return f"no_events: `{pattern.describe()}` found: {describe_event(event, index)}"
    return None


def _active_skill(check: ActiveSkillCheck, obs: Observation) -> str | None:
    actual = obs.state.active_skill_id
    if actual == check.skill_id:
        return None
    return f"active_skill: expected {check.skill_id!r}, got {actual!r}"


def _step(check: StepCheck, obs: Observation) -> str | None:
    top = obs.state.stack[-1] if obs.state.stack else None
    if top is None or top.type != "ordered_block":
        got = "an empty stack" if top is None else f"skill frame {top.skill_id!r} on top"
        return None if check.none else f"step: expected an ordered block on top, got {got}"
    actual = {"skill": top.skill_id, "block": top.block_id, "step": top.step_id}
    if check.none:
        return f"step: expected no ordered block on top, got {actual}"
    wanted = {"skill": check.skill, "block": check.block, "step": check.step}
    if all(value is None or actual[key] == value for key, value in wanted.items()):
        return None
    shown = {key: value for key, value in wanted.items() if value is not None}
    return f"step: expected {shown}, got {actual}"


def _status(check: StatusCheck, obs: Observation) -> str | None:
    if obs.state.status == check.status:
        return None
    return f"state: expected {check.status!r}, got {obs.state.status!r}"


def _stop_reason(check: StopReasonCheck, obs: Observation) -> str | None:
    if obs.stop_reason == check.reason:
        return None
    if obs.stop_reason is None:
        return f"stop_reason: expected {check.reason!r}, but no turn has run yet"
    return f"stop_reason: expected {check.reason!r}, got {obs.stop_reason!r}"


def _count(check: CountCheck, obs: Observation) -> str | None:
    counts = {
        "bot_count": len(obs.bot_messages),
        "model_calls": obs.model_calls,
        "model_requests_left": obs.replies_left,
    }
    actual = counts[check.what]
    return (
        None
        if actual == check.expected
        else f"{check.what}: expected {check.expected}, got {actual}"
    )


def _pending(check: PendingConfirmationCheck, obs: Observation) -> str | None:
    pending = obs.state.pending_confirmation
    actual = None if pending is None else pending.tool_name
    if actual == check.tool_name:
        return None
    return f"pending_confirmation: expected {check.tool_name!r}, got {actual!r}"


def _request(check: RequestCheck, obs: Observation) -> str | None:
    count = len(obs.requests)
    index = check.number - 1 if check.number > 0 else count + check.number
    which = "the last model request" if check.number == -1 else f"model request {check.number}"
    if not 0 <= index < count:
        return f"{which}: the scripted model received only {count} request(s)"
    request = obs.requests[index]
    offered = [tool.name for tool in request.tools]
    problems: list[str] = []
    if check.tier is not None and request.tier != check.tier:
        problems.append(f"tier {request.tier!r}, expected {check.tier!r}")
    if check.offered is not None and sorted(offered) != sorted(check.offered):
        missing = sorted(set(check.offered) - set(offered))
        extra = sorted(set(offered) - set(check.offered))
        problems.append(f"offered {offered} (missing {missing}, unexpected {extra})")
    shown = [name for name in check.not_offered if name in offered]
    if shown:
        problems.append(f"offered {shown}, which must not be offered")
    text = request_text(request)
    problems += [
        f"no {t.describe()} in the prompt" for t in check.contains if not t.occurs_in(text)
    ]
    problems += [f"{t.describe()} is in the prompt" for t in check.lacks if t.occurs_in(text)]
    return f"{which}: " + "; ".join(problems) if problems else None


def request_text(request: ModelRequest) -> str:
    """Everything the model read in a request, separated by blank lines: each message's
    text, the tool calls as `name(arguments)`, and each offered tool as `name: description`."""
    parts: list[str] = []
    for message in request.messages:
        if message["content"]:
            parts.append(message["content"])
        if message["role"] == "assistant":
            for call in message.get("tool_calls", ()):
                function = call["function"]
                parts.append(f"{function['name']}({function['arguments']})")
    parts += [f"{tool.name}: {tool.description}" for tool in request.tools]
    return "\n\n".join(parts)


_CHECKERS: Mapping[type, Callable[[Any, Observation], str | None]] = MappingProxyType(
    {
        MemoryCheck: _memory,
        EventsCheck: _events,
        NoEventsCheck: _no_events,
        ActiveSkillCheck: _active_skill,
        StepCheck: _step,
        StatusCheck: _status,
        StopReasonCheck: _stop_reason,
        CountCheck: _count,
        PendingConfirmationCheck: _pending,
        RequestCheck: _request,
    }
)

COUNT_KEYS = frozenset({"bot_count", "model_calls", "model_requests_left"})
"""The assert keys that compare a count."""
