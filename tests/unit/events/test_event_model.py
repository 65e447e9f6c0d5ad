"""The event vocabulary: registry, value semantics, freezing of caller data."""

import collections
import dataclasses
import enum
from types import MappingProxyType

import pytest

from keel.events import model
from keel.events.base import (
    MAX_JSON_DEPTH,
    EventBase,
    JsonValue,
    NotJsonValue,
    freeze_json,
    freeze_mapping,
)
from keel.events.fields import field_specs
from keel.events.model import (
    EVENT_TYPES,
    BotMessage,
    Button,
    HistoryCompressed,
    MemorySet,
    RoutingDecided,
    SkillActivated,
    SkillCancelled,
    SkillInterrupted,
    StackChanged,
    StackFrame,
    ToolCallRefused,
    ToolExecuted,
)

SEED_001_KINDS = {
    "skill_activated",
    "skill_completed",
    "skill_cancelled",
    "skill_interrupted",
    "skill_resumed",
    "tool_executed",
    "memory_set",
    "memory_cleared",
}

ALL_KINDS = SEED_001_KINDS | {
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
    "mcp_tool_executed",
    "slot_set",
    "session_started",
    "user_message",
    "bot_message",
    "bot_turn_ended",
    "stack_changed",
    "step_advanced",
    "pause_point_created",
    "pause_point_resolved",
    "turn_started",
    "turn_ended",
    "conversation_state_changed",
    "model_called",
    "stage_timed",
    "tool_call_refused",
    "routing_decided",
    "history_compressed",
    "plan_cache_decided",
    "plan_executed",
    "barge_in",
    "stages_timed",
}


def _tool(**overrides: object) -> ToolExecuted:
    fields: dict[str, object] = {
        "tool_name": "lookup",
        "arguments": {"ids": [1, 2]},
        "source": "local",
        "result": "ok",
        "is_error": False,
        "tool_call_id": "c1",
    }
    fields.update(overrides)
    return ToolExecuted(**fields)  # type: ignore[arg-type]


def test_registry_lists_exactly_the_specified_kinds() -> None:
    assert set(EVENT_TYPES) == ALL_KINDS
    assert SEED_001_KINDS <= set(EVENT_TYPES)


def test_registry_maps_each_wire_name_to_its_class() -> None:
    for name, cls in EVENT_TYPES.items():
        assert cls.kind == name
    assert len(set(EVENT_TYPES.values())) == len(EVENT_TYPES)


def test_event_union_matches_registry() -> None:
    assert set(model.Event.__args__) == set(EVENT_TYPES.values())


@pytest.mark.parametrize("cls", list(EVENT_TYPES.values()), ids=list(EVENT_TYPES))
def test_every_kind_is_a_frozen_kw_only_slotted_event(cls: type[EventBase]) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    assert "__slots__" in cls.__dict__
    assert all(f.kw_only for f in dataclasses.fields(cls))
    names = {f.name for f in dataclasses.fields(cls)}
    assert {"timestamp", "metadata"} <= names
    # `type` and `v` are the codec's envelope keys.
    assert not names & {"type", "v"}
    # Building the codec reader proves every field type is one the codec supports.
    assert field_specs(cls)


def test_events_are_immutable() -> None:
    event = SkillActivated(skill_id="s")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.skill_id = "other"  # type: ignore[misc]


def test_same_fields_different_kind_are_not_equal() -> None:
    cancelled: object = SkillCancelled(skill_id="s", step_id="x")
    assert cancelled != SkillInterrupted(skill_id="s", step_id="x")
    assert SkillCancelled(skill_id="s", step_id="x") == SkillCancelled(skill_id="s", step_id="x")


def test_defaults_are_zero_timestamp_and_empty_metadata() -> None:
    event = SkillActivated(skill_id="s")
    assert event.timestamp == 0.0
    assert dict(event.metadata) == {}


def test_caller_mappings_are_copied_and_frozen() -> None:
    args: dict[str, object] = {"ids": [1, 2], "nested": {"a": 1}}
    event = _tool(arguments=args)
    args["ids"].append(3)  # type: ignore[attr-defined]
    args["new"] = True
    assert event.arguments == {"ids": (1, 2), "nested": {"a": 1}}
    assert isinstance(event.arguments, MappingProxyType)
    assert isinstance(event.arguments["nested"], MappingProxyType)
    with pytest.raises(TypeError):
        event.arguments["x"] = 1  # type: ignore[index]


def test_metadata_and_values_are_frozen() -> None:
    meta: dict[str, JsonValue] = {"provenance": {"tool": "t"}}
    event = MemorySet(key="project.x", value=[{"a": 1}], metadata=meta)
    meta["provenance"] = "changed"
    assert event.value == ({"a": 1},)
    assert event.metadata == {"provenance": {"tool": "t"}}


def test_list_and_tuple_payloads_compare_equal() -> None:
    assert MemorySet(key="k", value=[1, [2]]) == MemorySet(key="k", value=(1, (2,)))
    buttons = [Button(title="Yes", payload="yes")]
    message = BotMessage(text="?", buttons=buttons, response_source="llm")  # type: ignore[arg-type]
    assert message.buttons == (Button(title="Yes", payload="yes"),)
    frames = [StackFrame(frame_id="f1", skill_id="s", type="skill")]
    assert StackChanged(frames=frames).frames == tuple(frames)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [{1, 2}, float("nan"), float("inf"), object(), {"a": b"bytes"}, {1: "non-str key"}],
    ids=["set", "nan", "inf", "object", "bytes", "int-key"],
)
def test_non_json_values_are_rejected_with_a_coded_error(bad: object) -> None:
    with pytest.raises(NotJsonValue) as info:
        MemorySet(key="k", value=bad)  # type: ignore[arg-type]
    assert info.value.code == "keel.events.not_json"


def test_non_mapping_arguments_are_rejected() -> None:
    with pytest.raises(NotJsonValue):
        _tool(arguments=[1, 2])


class _Colour(enum.StrEnum):
    RED = "red"


class _Size(enum.IntEnum):
    BIG = 3


def test_subclasses_of_json_types_become_their_base_type() -> None:
    event = MemorySet(
        key="k", value=collections.OrderedDict(colour=_Colour.RED, size=_Size.BIG, ok=True)
    )
    assert isinstance(event.value, MappingProxyType)
    assert type(event.value["colour"]) is str
    assert type(event.value["size"]) is int
    assert event.value == {"colour": "red", "size": 3, "ok": True}


def test_rejection_names_the_offending_part() -> None:
    with pytest.raises(NotJsonValue, match=r"value\.a\[1\]\.b: set is not a JSON value"):
        MemorySet(key="k", value={"a": [1, {"b": {2}}]})  # type: ignore[dict-item]
    with pytest.raises(NotJsonValue, match=r"metadata\.x: nan is not a finite number"):
        SkillActivated(skill_id="s", metadata={"x": float("nan")})
    with pytest.raises(NotJsonValue, match="key 1 is not a string"):
        SkillActivated(skill_id="s", metadata={1: "x"})  # type: ignore[dict-item]


def _nested(depth: int) -> object:
    value: object = 1
    for index in range(depth):
        value = {"a": value} if index % 2 else [value]
    return value


def test_nesting_deeper_than_the_limit_is_a_coded_error_not_a_recursion_error() -> None:
    assert freeze_json(_nested(MAX_JSON_DEPTH)) is not None
    for depth in (MAX_JSON_DEPTH + 1, 5_000):
        with pytest.raises(NotJsonValue, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
            MemorySet(key="k", value=_nested(depth))  # type: ignore[arg-type]
    with pytest.raises(NotJsonValue, match=r"\$\.x\.y: nested deeper than 2 levels"):
        freeze_mapping({"x": {"y": []}}, max_depth=2)
    assert freeze_mapping({"x": {"y": 1}}, max_depth=2) == {"x": {"y": 1}}


def test_lone_surrogates_in_strings_and_keys_are_rejected() -> None:
    assert MemorySet(key="k", value={"café": "naïve ✓"}).value == {"café": "naïve ✓"}
    with pytest.raises(NotJsonValue, match=r"value\.a\[0\]: a string is not valid UTF-8"):
        MemorySet(key="k", value={"a": ["x\ud800"]})
    with pytest.raises(NotJsonValue, match=r"metadata: key '\\udfff' is not valid UTF-8"):
        SkillActivated(skill_id="s", metadata={"\udfff": 1})


def test_tool_call_refused_keeps_the_raw_argument_text() -> None:
    raw = '{"order_id": 1042,'
    event = ToolCallRefused(
        tool_name="lookup_order",
        arguments=raw,
        code="tool.arguments.invalid",
        message="lookup_order: arguments are not valid JSON",
        tool_call_id="call-1",
        tool_batch_id="batch-1",
        retryable=True,
    )
    assert event.kind == "tool_call_refused"
    assert event.arguments == raw
    defaults = ToolCallRefused(
        tool_name="listen", arguments="{}", code="listen.dropped", message="", tool_call_id="c"
    )
    assert (defaults.tool_batch_id, defaults.retryable) == (None, False)


def test_routing_decided_defaults_and_frozen_candidates() -> None:
    candidates = ["return_order", "order_status"]
    event = RoutingDecided(
        source="router",
        skill_id="order_status",
        tier="router",
        confidence=0.92,
        candidates=candidates,  # type: ignore[arg-type]
    )
    candidates.append("faq")
    assert event.kind == "routing_decided"
    assert event.candidates == ("return_order", "order_status")
    assert event == RoutingDecided(
        source="router",
        skill_id="order_status",
        tier="router",
        confidence=0.92,
        candidates=("return_order", "order_status"),
    )
    none = RoutingDecided(source="none", skill_id=None, tier=None)
    assert (none.confidence, none.candidates, none.reason) == (None, (), "")


def test_history_compressed_defaults_and_frozen_kept_labels() -> None:
    kept = ["pending_confirmation", "current_turn_tool_results"]
    event = HistoryCompressed(
        budget_tokens=4000,
        tokens_before=6100,
        tokens_after=3900,
        dropped_messages=9,
        kept=kept,  # type: ignore[arg-type]
    )
    kept.clear()
    assert event.kind == "history_compressed"
    assert event.kept == ("pending_confirmation", "current_turn_tool_results")
    assert (event.summarized_messages, event.model) == (0, "")
