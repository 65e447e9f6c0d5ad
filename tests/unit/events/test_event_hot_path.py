"""The event hot path: encoding once with orjson (the standard library for what it refuses),
copies built from frozen fields without freezing them again, stamping in place, and the
fold's shortcut for batches of records."""

from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType

import pytest

from keel.events.base import from_frozen, stamp
from keel.events.codec import dumps_event, encode_event, known_text, loads_event
from keel.events.conversation import stage_timings
from keel.events.fold import ConversationState, fold
from keel.events.model import (
    BotMessage,
    Button,
    McpToolExecuted,
    MemorySet,
    ModelCalled,
    SkillActivated,
    SlotSet,
    StackChanged,
    StackFrame,
    StagesTimed,
    StageTimed,
    ToolExecuted,
)

EVENTS = [
    MemorySet(key="project.big", value=2**70),
    MemorySet(key="project.tiny", value=[5e-324, 1e-7, -0.0, 1e22, "é\u2028\x00"]),
    BotMessage(text="hi", response_source="verbatim", buttons=(Button(title="a", payload="b"),)),
    StackChanged(frames=(StackFrame(frame_id="f", skill_id="s", type="skill"),)),
    ModelCalled(model="m", tier="t", input_tokens=1, output_tokens=2, latency_ms=0.5),
]


@pytest.mark.parametrize("event", EVENTS, ids=[e.kind for e in EVENTS])
def test_one_encoding_reads_back_as_the_event_and_as_encode_event(event: object) -> None:
    text = dumps_event(event)  # type: ignore[arg-type]
    assert loads_event(text) == event
    assert json.loads(text) == encode_event(event)  # type: ignore[arg-type]
    assert "\n" not in text


def test_a_non_finite_number_field_is_refused_not_written_as_null() -> None:
    called = ModelCalled(model="m", tier="t", input_tokens=1, output_tokens=2, latency_ms=1.0)
    object.__setattr__(called, "latency_ms", float("inf"))
    with pytest.raises(ValueError, match="latency_ms"):
        dumps_event(called)


def test_a_copy_from_frozen_fields_equals_the_constructed_one_and_shares_them() -> None:
    run = ToolExecuted(
        tool_name="t",
        arguments={"ids": [1, 2], "q": {"a": None}},
        source="local",
        result="ok",
        is_error=False,
        tool_call_id="c1",
    )
    fields = {
        f.name: getattr(run, f.name)
        for f in dataclasses.fields(McpToolExecuted)
        if f.name not in ("timestamp", "metadata")
    }
    copy = from_frozen(McpToolExecuted, **fields)
    assert copy == McpToolExecuted(**fields)
    assert copy.arguments is run.arguments
    assert from_frozen(SlotSet, name="k", value=1) == SlotSet(name="k", value=1)
    with pytest.raises(TypeError, match="missing field 'name'"):
        from_frozen(SlotSet, value=1)
    with pytest.raises(TypeError, match="unexpected"):
        from_frozen(SlotSet, name="k", value=1, nope=2)


def test_stamping_in_place_sets_only_the_timestamp() -> None:
    event = SkillActivated(skill_id="s")
    stamp(event, 12.5)
    assert event == SkillActivated(skill_id="s", timestamp=12.5)


def test_a_batch_of_records_moves_the_state_on_by_its_count_only() -> None:
    state = fold([MemorySet(key="project.x", value=1), BotMessage(text="b", response_source="llm")])
    records = [SkillActivated(skill_id="s"), SkillActivated(skill_id="t")]
    moved = fold(records, state)
    assert moved == dataclasses.replace(state, last_seq=state.last_seq + 2)
    assert fold((), state) is state
    assert fold(iter(records), ConversationState()).last_seq == 2


def test_a_turns_stages_in_one_event_read_as_one_stage_timed_each() -> None:
    compact = StagesTimed(durations_ms={"load": 0.5, "model": 12}, timestamp=3.0)
    old = StageTimed(stage="route", duration_ms=0.25, timestamp=2.0)
    assert compact.expanded() == (
        StageTimed(stage="load", duration_ms=0.5, timestamp=3.0),
        StageTimed(stage="model", duration_ms=12.0, timestamp=3.0),
    )
    assert stage_timings([old, SkillActivated(skill_id="s"), compact]) == [
        old,
        *compact.expanded(),
    ]
    assert loads_event(dumps_event(compact)) == compact


def test_a_known_text_is_written_as_it_is_and_the_fallback_writes_the_mapping() -> None:
    # `known_text` (what keel.loop.model_record tells of a model call's metadata): the
    # codec writes that text for that very mapping, and walks an equal one as before.
    metadata = MappingProxyType({"a": 1})
    known_text(metadata, b'{"a":1}')
    called = ModelCalled(model="m", tier="t", input_tokens=1, output_tokens=2, latency_ms=0.5)
    object.__setattr__(called, "metadata", metadata)
    assert json.loads(dumps_event(called)) == encode_event(called)
    # With an integer beyond 64 bits elsewhere the standard library writes the event, and
    # writes the mapping itself (it takes no orjson fragment).
    object.__setattr__(called, "input_tokens", 2**70)
    assert json.loads(dumps_event(called)) == encode_event(called)
    assert loads_event(dumps_event(called)) == called


def test_a_batch_of_records_moves_every_field_of_the_state_on() -> None:
    # The shortcut copies the state field by field: a field it forgot would be unset.
    state = fold(
        [
            MemorySet(key="project.plan", value="gold"),
            StackChanged(frames=(StackFrame(frame_id="f", skill_id="s", type="skill"),)),
            BotMessage(text="hi", response_source="llm", buttons=(Button(title="a", payload="b"),)),
        ]
    )
    moved = fold([SkillActivated(skill_id="s")], state)
    assert moved == dataclasses.replace(state, last_seq=state.last_seq + 1)
    for f in dataclasses.fields(ConversationState):
        assert getattr(moved, f.name) == getattr(dataclasses.replace(state, last_seq=4), f.name)
