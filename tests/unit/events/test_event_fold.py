"""The fold: what each event does to ConversationState, and incrementality."""

from types import MappingProxyType

import pytest
from event_strategies import events_of
from hypothesis import given
from hypothesis import strategies as st

from keel.events.base import JsonValue
from keel.events.fold import (
    PENDING_CONFIRMATION_KEY,
    SESSION_METADATA_KEY,
    ConversationState,
    PendingConfirmation,
    fold,
    state_to_json,
)
from keel.events.model import (
    EVENT_TYPES,
    BotMessage,
    Button,
    ConversationStateChanged,
    Event,
    HistoryCompressed,
    MemoryCleared,
    MemorySet,
    PausePointCreated,
    PausePointResolved,
    RoutingDecided,
    SessionStarted,
    SkillActivated,
    SlotSet,
    StackChanged,
    StackFrame,
    StepAdvanced,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
    UserMessage,
)

SKILL = StackFrame(frame_id="f1", skill_id="returns", type="skill")
BLOCK = StackFrame(
    frame_id="f2", skill_id="returns", type="ordered_block", block_id="main", step_id="ask"
)
PAUSE = PausePointCreated(
    pause_id="p1",
    tool_name="refund",
    tool_args={"amount": 5},
    confirmation_ask="Refund $5?",
    utter_on_user_denial="utter_no_refund",
    skill_id="returns",
    frame_id="f2",
    execute_step_id="pay",
)

# Kinds that change state; the strategy below favours them so the property tests bite.
_STATEFUL = [
    "conversation_state_changed",
    "stack_changed",
    "step_advanced",
    "memory_set",
    "slot_set",
    "memory_cleared",
    "session_started",
    "pause_point_created",
    "pause_point_resolved",
    "turn_started",
    "turn_ended",
    "bot_message",
]
_small_keys = st.sampled_from(["project.a", "s.b", PENDING_CONFIRMATION_KEY, SESSION_METADATA_KEY])
_stateful_events = st.one_of(
    events_of(_STATEFUL),
    st.builds(MemorySet, key=_small_keys, value=st.integers()),
    st.builds(MemoryCleared, key=_small_keys),
    st.builds(PausePointResolved, pause_id=st.sampled_from(["p1", "p2"]), approved=st.booleans()),
    st.just(PAUSE),
    events_of(),
)


def test_empty_log_gives_the_initial_state() -> None:
    state = fold([])
    assert state == ConversationState()
    assert state.status == "idle"
    assert state.stack == ()
    assert dict(state.memory) == {}
    assert state.pending_confirmation is None
    assert state.active_skill_id is None
    assert state.last_seq == 0


def test_status_follows_conversation_state_changed_only() -> None:
    events: list[Event] = [
        TurnStarted(turn_id="t1"),
        ConversationStateChanged(state="running"),
        TurnEnded(turn_id="t1", stop_reason="paused"),
    ]
    assert fold(events).status == "running"
    assert fold([*events, ConversationStateChanged(state="paused")]).status == "paused"


def test_turns_count_and_record_the_stop_reason() -> None:
    state = fold([TurnStarted(turn_id="t1")])
    assert (state.current_turn_id, state.turn_count, state.last_stop_reason) == ("t1", 1, None)
    state = fold([TurnEnded(turn_id="t1", stop_reason="budget_exhausted")], state)
    assert (state.current_turn_id, state.turn_count) == (None, 1)
    assert state.last_stop_reason == "budget_exhausted"


def test_stack_is_replaced_and_steps_advance_in_their_frame() -> None:
    state = fold([StackChanged(frames=(SKILL, BLOCK))])
    assert state.stack == (SKILL, BLOCK)
    assert state.active_skill_id == "returns"
    state = fold(
        [StepAdvanced(skill_id="returns", block_id="main", frame_id="f2", step_id="pay")], state
    )
    assert state.stack[1].step_id == "pay"
    assert state.stack[0] == SKILL
    assert fold([StackChanged(frames=())], state).active_skill_id is None


def test_step_for_an_unknown_frame_changes_nothing() -> None:
    state = fold([StackChanged(frames=(SKILL, BLOCK))])
    moved = StepAdvanced(skill_id="x", block_id="main", frame_id="nope", step_id="pay")
    assert fold([moved], state).stack == state.stack


def test_active_skill_is_the_topmost_skill_frame() -> None:
    child = StackFrame(frame_id="f3", skill_id="child", type="skill")
    child_block = StackFrame(
        frame_id="f4", skill_id="child", type="ordered_block", block_id="b", step_id="s"
    )
    assert fold([StackChanged(frames=(SKILL, BLOCK, child, child_block))]).active_skill_id == (
        "child"
    )


def test_memory_set_slot_set_and_clear() -> None:
    state = fold(
        [
            MemorySet(key="project.name", value="Dana"),
            SlotSet(name="returns.item", value=["KB-01"], filled_by="set_fields"),
            MemorySet(key="project.name", value="Dee"),
            MemoryCleared(key="returns.item"),
            MemoryCleared(key="never.set"),
        ]
    )
    assert state.memory == {"project.name": "Dee"}
    assert isinstance(state.memory, MappingProxyType)


def test_slot_set_alone_replays_old_logs() -> None:
    state = fold([SlotSet(name="project.tier", value="gold")])
    assert state.memory == {"project.tier": "gold"}


def test_session_start_drops_previous_session_metadata() -> None:
    first = fold([SessionStarted(), MemorySet(key=SESSION_METADATA_KEY, value={"lang": "en"})])
    assert first.session_metadata == {"lang": "en"}
    later = fold([MemorySet(key="project.keep", value=1), SessionStarted()], first)
    assert later.session_metadata == {}
    assert SESSION_METADATA_KEY not in later.memory
    assert later.memory == {"project.keep": 1}


def test_session_metadata_that_is_not_a_mapping_reads_as_empty() -> None:
    assert fold([SlotSet(name=SESSION_METADATA_KEY, value="junk")]).session_metadata == {}


def test_pause_point_is_pending_until_its_resolution() -> None:
    state = fold([PAUSE])
    assert state.pending_confirmation == PendingConfirmation(
        pause_id="p1",
        tool_name="refund",
        tool_args={"amount": 5},
        confirmation_ask="Refund $5?",
        utter_on_user_denial="utter_no_refund",
        skill_id="returns",
        frame_id="f2",
        execute_step_id="pay",
    )
    other = fold([PausePointResolved(pause_id="p0", approved=True)], state)
    assert other.pending_confirmation == state.pending_confirmation
    resolved = fold([PausePointResolved(pause_id="p1", approved=False)], state)
    assert resolved.pending_confirmation is None


def test_mirrored_memory_record_does_not_replace_the_pause_point() -> None:
    record: dict[str, JsonValue] = {
        "tool_name": "refund",
        "tool_args": {"amount": 5},
        "confirmation_ask": "?",
    }
    state = fold([PAUSE, MemorySet(key=PENDING_CONFIRMATION_KEY, value=record)])
    assert state.pending_confirmation is not None
    assert state.pending_confirmation.pause_id == "p1"
    assert state.memory[PENDING_CONFIRMATION_KEY] == record
    cleared = fold([MemoryCleared(key=PENDING_CONFIRMATION_KEY)], state)
    assert cleared.pending_confirmation is None
    assert PENDING_CONFIRMATION_KEY not in cleared.memory


def test_mantle_style_pending_record_in_memory() -> None:
    record = {
        "tool_name": "refund",
        "tool_args": {"amount": 5},
        "confirmation_ask": "Refund $5?",
        "utter_on_user_denial": None,
        "skill_id": "returns",
        "frame_id": "f2",
        "execute_step_id": None,
    }
    state = fold([SlotSet(name=PENDING_CONFIRMATION_KEY, value=record)])
    assert state.pending_confirmation == PendingConfirmation(
        pause_id="",
        tool_name="refund",
        tool_args={"amount": 5},
        confirmation_ask="Refund $5?",
        skill_id="returns",
        frame_id="f2",
    )


@pytest.mark.parametrize("record", ["text", {"tool_args": {}}, {"tool_name": "t", "tool_args": 1}])
def test_unrecognised_pending_records_are_kept_in_memory_only(record: object) -> None:
    state = fold([MemorySet(key=PENDING_CONFIRMATION_KEY, value=record)])  # type: ignore[arg-type]
    assert state.pending_confirmation is None
    assert PENDING_CONFIRMATION_KEY in state.memory


def test_last_bot_buttons_follow_the_latest_bot_message() -> None:
    yes = Button(title="Yes", payload="set:session.project.ok=true")
    state = fold([BotMessage(text="?", buttons=(yes,), response_source="verbatim")])
    assert state.last_bot_buttons == (yes,)
    assert fold([UserMessage(text="hi", message_id="m")], state).last_bot_buttons == (yes,)
    assert fold([BotMessage(text="ok", response_source="llm")], state).last_bot_buttons == ()


def test_record_only_events_leave_the_state_alone_but_count() -> None:
    base = fold([StackChanged(frames=(SKILL,)), MemorySet(key="project.a", value=1)])
    after = fold(
        [
            SkillActivated(skill_id="other"),
            ToolExecuted(
                tool_name="t",
                arguments={},
                source="local",
                result="r",
                is_error=False,
                tool_call_id="c",
            ),
            ToolCallRefused(
                tool_name="set_fields",
                arguments='{"project.a": 2}',
                code="memory.write.not_llm_settable",
                message="project.a cannot be set by the model",
                tool_call_id="c2",
            ),
            RoutingDecided(
                source="model",
                skill_id="other",
                tier="default",
                candidates=("returns", "other"),
            ),
            HistoryCompressed(
                budget_tokens=100,
                tokens_before=250,
                tokens_after=90,
                dropped_messages=6,
                kept=("pending_confirmation",),
            ),
        ],
        base,
    )
    assert after == ConversationState(
        status=base.status, stack=base.stack, memory=base.memory, last_seq=base.last_seq + 5
    )


def test_fold_does_not_change_its_initial_state() -> None:
    initial = fold([MemorySet(key="project.a", value=1)])
    fold([MemorySet(key="project.a", value=2), MemoryCleared(key="project.a")], initial)
    assert initial.memory == {"project.a": 1}


def test_every_kind_is_either_folded_or_knowingly_ignored() -> None:
    from keel.events.fold import _HANDLERS

    ignored = set(EVENT_TYPES.values()) - set(_HANDLERS)
    assert {cls.kind for cls in ignored} == {
        "skill_activated",
        "skill_completed",
        "skill_cancelled",
        "skill_interrupted",
        "skill_resumed",
        "ordered_block_entered",
        "ordered_block_completed",
        "ordered_block_cancelled",
        "ordered_block_interrupted",
        "ordered_block_resumed",
        "flow_started",
        "flow_completed",
        "flow_cancelled",
        "flow_interrupted",
        "flow_resumed",
        "tool_executed",
        "mcp_tool_executed",
        "tool_call_refused",
        "routing_decided",
        "history_compressed",
        "user_message",
        "bot_turn_ended",
        "model_called",
        "stage_timed",
        "plan_cache_decided",
        "plan_executed",
        "barge_in",
        "stages_timed",
    }


@given(st.lists(_stateful_events, max_size=20), st.integers(min_value=0, max_value=20))
def test_fold_is_incremental(events: list[Event], cut: int) -> None:
    head, tail = events[:cut], events[cut:]
    assert fold(tail, fold(head)) == fold(events)


@given(st.lists(_stateful_events, max_size=20))
def test_last_seq_counts_events(events: list[Event]) -> None:
    assert fold(events).last_seq == len(events)


@given(st.lists(_stateful_events, max_size=12))
def test_state_to_json_is_plain_and_stable(events: list[Event]) -> None:
    state = fold(events)
    data = state_to_json(state)
    assert data == state_to_json(fold(events))
    assert data["last_seq"] == len(events)
    assert data["active_skill_id"] == state.active_skill_id
    assert list(data) == sorted(data)
