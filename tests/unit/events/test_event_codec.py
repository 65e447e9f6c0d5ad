"""The versioned JSON codec: round trips, envelope, rejections, upcasting, JSONL."""

import json
from collections.abc import Callable

import pytest
from event_strategies import any_event, events_of
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.errors import KeelError, StoreError
from keel.events.codec import (
    SCHEMA_VERSION,
    SCHEMA_VERSIONS,
    UPCASTERS,
    decode_event,
    dumps,
    dumps_event,
    encode_event,
    loads,
    loads_event,
)
from keel.events.errors import (
    EventDecodeError,
    MalformedEvent,
    UnknownEventKind,
    UnsupportedSchemaVersion,
)
from keel.events.model import (
    EVENT_TYPES,
    BotMessage,
    Button,
    Event,
    HistoryCompressed,
    MemorySet,
    RoutingDecided,
    SkillActivated,
    ToolCallRefused,
)

_V3_KINDS = {"routing_decided", "history_compressed"}
_V2_KINDS = {"tool_call_refused"}


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
@settings(max_examples=25)
@given(data=st.data())
def test_round_trip_every_kind(kind: str, data: st.DataObject) -> None:
    event = data.draw(events_of([kind]))
    assert decode_event(encode_event(event)) == event


@given(any_event)
def test_round_trip_through_json_text(event: Event) -> None:
    assert loads_event(dumps_event(event)) == event
    assert json.loads(json.dumps(encode_event(event))) == encode_event(event)


@given(st.lists(any_event, max_size=6))
def test_jsonl_round_trip(events: list[Event]) -> None:
    text = dumps(events)
    assert text.count("\n") == len(events)
    assert loads(text) == events


def test_encoded_shape_has_envelope_then_payload() -> None:
    event = BotMessage(
        text="Pick one",
        buttons=(Button(title="A", payload="set:session.project.x=a"),),
        response_source="verbatim",
        timestamp=12.5,
        metadata={"k": [1]},
    )
    encoded = encode_event(event)
    assert list(encoded)[:2] == ["type", "v"]
    assert encoded == {
        "type": "bot_message",
        "v": SCHEMA_VERSION,
        "text": "Pick one",
        "buttons": [{"title": "A", "payload": "set:session.project.x=a"}],
        "utter_action": None,
        "response_source": "verbatim",
        "timestamp": 12.5,
        "metadata": {"k": [1]},
    }


def test_encoding_shares_nothing_with_the_event() -> None:
    event = MemorySet(key="project.x", value={"a": [1]})
    encoded = encode_event(event)
    encoded["value"]["a"].append(2)  # type: ignore[index]
    assert event.value == {"a": (1,)}


def test_schema_version_policy_has_a_summary_for_every_version() -> None:
    assert SCHEMA_VERSION == 8
    assert set(SCHEMA_VERSIONS) == set(range(1, SCHEMA_VERSION + 1))
    assert set(UPCASTERS) == set(range(1, SCHEMA_VERSION))
    assert "tool_call_refused" in SCHEMA_VERSIONS[2]
    assert all(kind in SCHEMA_VERSIONS[3] for kind in _V3_KINDS)
    assert "error_code" in SCHEMA_VERSIONS[4]
    assert "cached_input_tokens" in SCHEMA_VERSIONS[6]
    assert "barge_in" in SCHEMA_VERSIONS[7]
    assert "stages_timed" in SCHEMA_VERSIONS[8]


def test_new_events_are_written_at_the_current_version() -> None:
    assert encode_event(SkillActivated(skill_id="s"))["v"] == SCHEMA_VERSION
    assert json.loads(dumps_event(SkillActivated(skill_id="s")))["v"] == SCHEMA_VERSION


@given(events_of(sorted(set(EVENT_TYPES) - _V2_KINDS - _V3_KINDS)))
def test_v1_events_decode_unchanged_through_the_v1_to_v2_to_v3_upcasters(event: Event) -> None:
    # Versions 2 and 3 only added kinds, so a version 1 event is the same event at 3.
    old = {**encode_event(event), "v": 1}
    before = dict(old)
    assert decode_event(old) == event
    assert UPCASTERS[1](dict(old)) == old
    assert UPCASTERS[2](dict(old)) == old
    assert old == before


@given(events_of(sorted(set(EVENT_TYPES) - _V3_KINDS)))
def test_v2_events_decode_unchanged_through_the_v2_to_v3_upcaster(event: Event) -> None:
    # Version 3 only added kinds, so a version 2 event is the same event at version 3.
    old = {**encode_event(event), "v": 2}
    before = dict(old)
    assert decode_event(old) == event
    assert UPCASTERS[2](dict(old)) == old
    assert old == before


def test_upcasting_a_v1_event_walks_every_upcaster_in_order() -> None:
    seen: list[int] = []

    def step(version: int) -> Callable[[dict[str, object]], dict[str, object]]:
        def upcast(data: dict[str, object]) -> dict[str, object]:
            seen.append(version)
            assert data["v"] == version
            return data

        return upcast

    old = {"type": "skill_activated", "v": 1, "skill_id": "s"}
    decoded = decode_event(old, upcasters={n: step(n) for n in range(1, 8)})
    assert decoded == SkillActivated(skill_id="s")
    assert seen == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("kind", ["tool_executed", "mcp_tool_executed"])
def test_v3_tool_runs_gain_an_empty_error_code_at_v4(kind: str) -> None:
    old: dict[str, object] = {
        "type": kind,
        "v": 3,
        "tool_name": "lookup",
        "arguments": {"id": "1"},
        "source": "mcp",
        "result": "boom",
        "is_error": True,
        "error_message": "boom",
        "mcp_server": "orders",
        "tool_call_id": "c1",
    }
    if kind == "mcp_tool_executed":
        del old["tool_call_id"]
    before = dict(old)
    assert UPCASTERS[3](dict(old)) == {**old, "error_code": None}
    decoded = decode_event(old)
    assert decoded.error_code is None  # type: ignore[union-attr]
    assert encode_event(decoded)["error_code"] is None
    assert old == before


@given(events_of(sorted(set(EVENT_TYPES) - {"tool_executed", "mcp_tool_executed"})))
def test_v3_events_other_than_tool_runs_are_unchanged_by_the_v3_to_v4_upcaster(
    event: Event,
) -> None:
    old = {**encode_event(event), "v": 3}
    assert UPCASTERS[3](dict(old)) == old
    assert decode_event(old) == event


def test_tool_call_refused_encodes_flat_with_its_defaults() -> None:
    event = ToolCallRefused(
        tool_name="set_fields",
        arguments='{"project.tier": "gold"',
        code="memory.write.not_llm_settable",
        message="project.tier cannot be set by the model",
        tool_call_id="call-9",
    )
    encoded = encode_event(event)
    assert encoded == {
        "type": "tool_call_refused",
        "v": SCHEMA_VERSION,
        "tool_name": "set_fields",
        "arguments": '{"project.tier": "gold"',
        "code": "memory.write.not_llm_settable",
        "message": "project.tier cannot be set by the model",
        "tool_call_id": "call-9",
        "tool_batch_id": None,
        "retryable": False,
        "timestamp": 0.0,
        "metadata": {},
    }
    assert loads_event(dumps_event(event)) == event
    with pytest.raises(MalformedEvent, match="arguments"):
        decode_event({**encoded, "arguments": {"project.tier": "gold"}})


def test_routing_decided_encodes_flat_with_its_defaults() -> None:
    event = RoutingDecided(source="model", skill_id="return_order", tier="default")
    encoded = encode_event(event)
    assert encoded == {
        "type": "routing_decided",
        "v": SCHEMA_VERSION,
        "source": "model",
        "skill_id": "return_order",
        "tier": "default",
        "confidence": None,
        "candidates": [],
        "reason": "",
        "timestamp": 0.0,
        "metadata": {},
    }
    full = RoutingDecided(
        source="router",
        skill_id=None,
        tier="router",
        confidence=0.25,
        candidates=("return_order", "order_status"),
        reason="below threshold",
    )
    assert loads_event(dumps_event(full)) == full
    assert encode_event(full)["candidates"] == ["return_order", "order_status"]
    with pytest.raises(MalformedEvent, match="source"):
        decode_event({**encoded, "source": "telepathy"})
    with pytest.raises(MalformedEvent, match=r"candidates\[1\]"):
        decode_event({**encoded, "candidates": ["return_order", 7]})
    with pytest.raises(MalformedEvent, match="candidates"):
        decode_event({**encoded, "candidates": "return_order"})


def test_history_compressed_encodes_flat_with_its_defaults() -> None:
    event = HistoryCompressed(
        budget_tokens=4000, tokens_before=6100, tokens_after=3900, dropped_messages=9
    )
    encoded = encode_event(event)
    assert encoded == {
        "type": "history_compressed",
        "v": SCHEMA_VERSION,
        "budget_tokens": 4000,
        "tokens_before": 6100,
        "tokens_after": 3900,
        "dropped_messages": 9,
        "summarized_messages": 0,
        "kept": [],
        "model": "",
        "timestamp": 0.0,
        "metadata": {},
    }
    full = HistoryCompressed(
        budget_tokens=4000,
        tokens_before=6100,
        tokens_after=3900,
        dropped_messages=9,
        summarized_messages=4,
        kept=("pending_confirmation", "collected_values"),
        model="gpt-4.1-mini",
    )
    assert loads_event(dumps_event(full)) == full
    with pytest.raises(MalformedEvent, match="budget_tokens"):
        decode_event({**encoded, "budget_tokens": 4000.5})
    with pytest.raises(MalformedEvent, match=r"kept\[0\]"):
        decode_event({**encoded, "kept": [None]})


def _encoded(**overrides: object) -> dict[str, object]:
    data = encode_event(SkillActivated(skill_id="s", timestamp=1.0))
    data.update(overrides)
    return data


@pytest.mark.parametrize(
    ("data", "error", "code"),
    [
        (_encoded(type="skill_exploded"), UnknownEventKind, "keel.store.decode.unknown_kind"),
        (_encoded(v=SCHEMA_VERSION + 1), UnsupportedSchemaVersion, "keel.store.decode.version"),
        (_encoded(v=0), UnsupportedSchemaVersion, "keel.store.decode.version"),
        (_encoded(v="1"), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(v=True), MalformedEvent, "keel.store.decode.malformed"),
        ({"v": 1, "skill_id": "s"}, MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(type=7), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(skill_id=3), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(extra="x"), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(timestamp="now"), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(timestamp=True), MalformedEvent, "keel.store.decode.malformed"),
        (_encoded(metadata=[1]), MalformedEvent, "keel.store.decode.malformed"),
    ],
    ids=[
        "unknown-kind",
        "future-version",
        "version-without-upcaster",
        "version-not-int",
        "version-bool",
        "missing-type",
        "type-not-str",
        "wrong-field-type",
        "unexpected-field",
        "timestamp-not-number",
        "timestamp-bool",
        "metadata-not-object",
    ],
)
def test_rejections_are_coded_store_errors(
    data: dict[str, object], error: type[EventDecodeError], code: str
) -> None:
    with pytest.raises(error) as info:
        decode_event(data)
    assert info.value.code == code
    assert isinstance(info.value, StoreError)
    assert isinstance(info.value, KeelError)


def test_missing_required_field_is_malformed() -> None:
    data = _encoded()
    del data["skill_id"]
    with pytest.raises(MalformedEvent, match="skill_id"):
        decode_event(data)


def test_missing_optional_fields_take_defaults() -> None:
    decoded = decode_event({"type": "skill_activated", "v": 1, "skill_id": "s"})
    assert decoded == SkillActivated(skill_id="s")


def test_bad_literal_and_bad_nested_values_are_malformed() -> None:
    bot = encode_event(BotMessage(text="t", response_source="llm"))
    with pytest.raises(MalformedEvent, match="response_source"):
        decode_event({**bot, "response_source": "telepathy"})
    with pytest.raises(MalformedEvent, match="buttons"):
        decode_event({**bot, "buttons": [{"title": "A"}]})
    with pytest.raises(MalformedEvent, match="buttons"):
        decode_event({**bot, "buttons": "A"})


def test_non_json_payload_is_malformed() -> None:
    data = encode_event(MemorySet(key="k", value=1))
    with pytest.raises(MalformedEvent):
        decode_event({**data, "value": {1, 2}})


def test_integers_are_accepted_for_float_fields() -> None:
    decoded = decode_event({"type": "skill_activated", "v": 1, "skill_id": "s", "timestamp": 5})
    assert decoded.timestamp == 5.0
    assert isinstance(decoded.timestamp, float)


def test_upcaster_hook_lifts_old_versions() -> None:
    def v0_to_v1(data: dict[str, object]) -> dict[str, object]:
        data["skill_id"] = data.pop("flow")
        return data

    old = {"type": "skill_activated", "v": 0, "flow": "returns"}
    decoded = decode_event(old, upcasters={**UPCASTERS, 0: v0_to_v1})
    assert decoded == SkillActivated(skill_id="returns")
    assert old == {"type": "skill_activated", "v": 0, "flow": "returns"}


def test_future_versions_are_rejected_even_with_upcasters() -> None:
    with pytest.raises(UnsupportedSchemaVersion):
        decode_event(_encoded(v=SCHEMA_VERSION + 1), upcasters={SCHEMA_VERSION + 1: dict})


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"a string"'])
def test_loads_event_rejects_non_objects(text: str) -> None:
    with pytest.raises(MalformedEvent):
        loads_event(text)


def test_loads_skips_blank_lines_and_names_the_bad_line() -> None:
    good = dumps_event(SkillActivated(skill_id="s"))
    assert loads(f"\n{good}\n\n{good}\n") == [SkillActivated(skill_id="s")] * 2
    with pytest.raises(UnknownEventKind, match="line 3"):
        loads(f"{good}\n\n" + json.dumps({"type": "nope", "v": 1}) + "\n")


def test_dumps_refuses_to_write_non_finite_numbers() -> None:
    event = SkillActivated(skill_id="s")
    object.__setattr__(event, "timestamp", float("nan"))
    with pytest.raises(ValueError):
        dumps_event(event)


def test_jsonl_keeps_unicode_line_separators_inside_strings() -> None:
    events = [BotMessage(text="a\x85b\u2028c\rd\ne", response_source="llm")]
    assert loads(dumps(events)) == events
