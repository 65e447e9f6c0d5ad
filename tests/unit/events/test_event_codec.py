"""The versioned JSON codec: round trips, envelope, rejections, upcasting, JSONL."""

import json

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
    MemorySet,
    SkillActivated,
    ToolCallRefused,
)


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
    assert SCHEMA_VERSION == 2
    assert set(SCHEMA_VERSIONS) == set(range(1, SCHEMA_VERSION + 1))
    assert set(UPCASTERS) == set(range(1, SCHEMA_VERSION))
    assert "tool_call_refused" in SCHEMA_VERSIONS[2]


def test_new_events_are_written_at_the_current_version() -> None:
    assert encode_event(SkillActivated(skill_id="s"))["v"] == SCHEMA_VERSION
    assert json.loads(dumps_event(SkillActivated(skill_id="s")))["v"] == SCHEMA_VERSION


@given(events_of(sorted(set(EVENT_TYPES) - {"tool_call_refused"})))
def test_v1_events_decode_unchanged_through_the_v1_to_v2_upcaster(event: Event) -> None:
    # Version 2 only added a kind, so a version 1 event is the same event at version 2.
    old = {**encode_event(event), "v": 1}
    before = dict(old)
    assert decode_event(old) == event
    assert UPCASTERS[1](dict(old)) == old
    assert old == before


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
        "v": 2,
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
