"""The pure checks of `bot:` and `assert:` steps."""

from __future__ import annotations

from keel.events.base import Button, EventBase, StackFrame
from keel.events.fold import fold
from keel.events.model import (
    BotMessage,
    ConversationStateChanged,
    MemorySet,
    PausePointCreated,
    StackChanged,
    ToolExecuted,
)
from keel.testing.conversation.assertions import Observation, check_bot, check_one, run_checks
from keel.testing.conversation.spec import (
    ActiveSkillCheck,
    BotExpect,
    ButtonExpect,
    CountCheck,
    EventPattern,
    EventsCheck,
    MemoryCheck,
    NoEventsCheck,
    PendingConfirmationCheck,
    StatusCheck,
    StepCheck,
    StopReasonCheck,
    TextExpect,
)


def _observe(*events: EventBase, **extra: object) -> Observation:
    return Observation(events=events, state=fold(events), **extra)  # type: ignore[arg-type]


def _bot(text: str, *buttons: tuple[str, str], utter: str | None = None) -> BotMessage:
    return BotMessage(
        text=text,
        buttons=tuple(Button(title=t, payload=p) for t, p in buttons),
        utter_action=utter,
        response_source="verbatim",
    )


def _tool(name: str) -> ToolExecuted:
    return ToolExecuted(
        tool_name=name, arguments={}, source="local", result="ok", is_error=False, tool_call_id="c"
    )


def test_bot_text_exact_and_pattern() -> None:
    message = _bot("Your parcel PX-1 is on its way.")
    assert check_bot(BotExpect(text=TextExpect.parse("re:PX-\\d+")), message, 1) is None
    reason = check_bot(BotExpect(text=TextExpect.parse("Hello")), message, 2)
    assert reason == "bot message #2: expected text 'Hello', got 'Your parcel PX-1 is on its way.'"


def test_bot_missing_message() -> None:
    reason = check_bot(BotExpect(text=TextExpect(text="x")), None, 3)
    assert reason == "expected bot message #3, but the bot sent only 2"


def test_bot_buttons_and_utter() -> None:
    message = _bot("Pick", ("Yes", "/yes"), ("No", "/no"), utter="utter_pick")
    both = (
        ButtonExpect(title=TextExpect(text="Yes")),
        ButtonExpect(title=TextExpect(text="No"), payload=TextExpect(text="/no")),
    )
    assert check_bot(BotExpect(buttons=both, utter="utter_pick"), message, 1) is None
    wrong_payload = (
        both[0],
        ButtonExpect(title=TextExpect(text="No"), payload=TextExpect(text="x")),
    )
    reason = check_bot(BotExpect(buttons=wrong_payload), message, 1)
    assert reason is not None and "expected buttons ['Yes', 'No'->'x']" in reason
    assert "got ['Yes'->'/yes', 'No'->'/no']" in reason
    assert check_bot(BotExpect(buttons=both[:1]), message, 1) is not None
    assert check_bot(BotExpect(buttons=()), _bot("plain"), 1) is None
    reason = check_bot(BotExpect(utter="utter_other"), message, 1)
    assert reason == "bot message #1: expected response 'utter_other', got 'utter_pick'"


def test_memory_values_and_unset() -> None:
    obs = _observe(MemorySet(key="order.id", value="PX-1"), MemorySet(key="order.n", value=2))
    assert check_one(MemoryCheck(key="order.id", expected="PX-1"), obs) is None
    assert check_one(MemoryCheck(key="order.n", expected=2.0), obs) is None
    assert check_one(MemoryCheck(key="order.x", expected=None, unset=True), obs) is None
    assert check_one(MemoryCheck(key="order.n", expected=True), obs) == (
        "memory order.n: expected True, got 2"
    )
    assert check_one(MemoryCheck(key="order.x", expected=1), obs) == (
        "memory order.x: expected 1, but it has no value"
    )
    assert check_one(MemoryCheck(key="order.id", expected=None, unset=True), obs) == (
        "memory order.id: expected no value, got 'PX-1'"
    )


def test_events_in_order_and_absent() -> None:
    obs = _observe(_tool("a"), _tool("b"))
    a, b = (EventPattern(kind="tool_executed", fields=(("tool_name", n),)) for n in "ab")
    assert check_one(EventsCheck(patterns=(a, b)), obs) is None
    reason = check_one(EventsCheck(patterns=(b, a)), obs)
    assert reason is not None
    assert reason.startswith("events: no `tool_executed tool_name='a'` after event #2")
    assert "matched 1 of 2" in reason and "#1 tool_executed tool_name='a'" in reason
    assert check_one(NoEventsCheck(patterns=(EventPattern(kind="bot_message"),)), obs) is None
    reason = check_one(NoEventsCheck(patterns=(EventPattern(kind="bot_message"), b)), obs)
    assert reason is not None and reason.startswith(
        "no_events: `tool_executed tool_name='b'` found: #2"
    )


def test_events_missing_kind_entirely() -> None:
    reason = check_one(EventsCheck(patterns=(EventPattern(kind="skill_activated"),)), _observe())
    assert reason == "events: no `skill_activated` (matched 0 of 1; skill_activated events: none)"


def _stack(*frames: StackFrame) -> StackChanged:
    return StackChanged(frames=frames)


SKILL = StackFrame(frame_id="f1", skill_id="redirect", type="skill")
BLOCK = StackFrame(
    frame_id="f2", skill_id="redirect", type="ordered_block", block_id="main", step_id="ask"
)


def test_active_skill() -> None:
    assert check_one(ActiveSkillCheck(skill_id=None), _observe()) is None
    obs = _observe(_stack(SKILL, BLOCK))
    assert check_one(ActiveSkillCheck(skill_id="redirect"), obs) is None
    assert check_one(ActiveSkillCheck(skill_id=None), obs) == (
        "active_skill: expected None, got 'redirect'"
    )


def test_step() -> None:
    obs = _observe(_stack(SKILL, BLOCK))
    assert check_one(StepCheck(block="main", step="ask"), obs) is None
    assert check_one(StepCheck(skill="redirect", step="ask"), obs) is None
    assert check_one(StepCheck(step="confirm"), obs) == (
        "step: expected {'step': 'confirm'}, "
        "got {'skill': 'redirect', 'block': 'main', 'step': 'ask'}"
    )
    assert check_one(StepCheck(none=True), obs) is not None
    assert check_one(StepCheck(none=True), _observe(_stack(SKILL))) is None
    assert check_one(StepCheck(step="ask"), _observe()) == (
        "step: expected an ordered block on top, got an empty stack"
    )


def test_status_stop_reason_counts_pending() -> None:
    obs = _observe(
        ConversationStateChanged(state="paused"),
        _bot("a"),
        _bot("b"),
        PausePointCreated(pause_id="p1", tool_name="reroute", tool_args={}, confirmation_ask="?"),
        stop_reason="paused",
        model_calls=3,
        replies_left=1,
    )
    assert (
        run_checks(
            (
                StatusCheck(status="paused"),
                StopReasonCheck(reason="paused"),
                CountCheck(what="bot_count", expected=2),
                CountCheck(what="model_calls", expected=3),
                CountCheck(what="model_requests_left", expected=1),
                PendingConfirmationCheck(tool_name="reroute"),
            ),
            obs,
        )
        == ()
    )
    assert run_checks(
        (
            StatusCheck(status="idle"),
            StopReasonCheck(reason="end_turn"),
            CountCheck(what="model_requests_left", expected=0),
            PendingConfirmationCheck(tool_name=None),
        ),
        obs,
    ) == (
        "state: expected 'idle', got 'paused'",
        "stop_reason: expected 'end_turn', got 'paused'",
        "model_requests_left: expected 0, got 1",
        "pending_confirmation: expected None, got 'reroute'",
    )


def test_stop_reason_before_any_turn() -> None:
    assert check_one(StopReasonCheck(reason="end_turn"), _observe()) == (
        "stop_reason: expected 'end_turn', but no turn has run yet"
    )
