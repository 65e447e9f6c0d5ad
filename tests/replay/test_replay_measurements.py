"""The pure parts of a replay: which fields are measurements, how measurements that differ
are paired and summed up, and what a stored log gives back as requests."""

from __future__ import annotations

from keel.events.codec import encode_event
from keel.events.fold import SESSION_METADATA_KEY
from keel.events.model import (
    BotMessage,
    BotTurnEnded,
    MemorySet,
    ModelCalled,
    SessionStarted,
    StageTimed,
    TurnStarted,
    UserMessage,
)
from keel.llm.port import Usage
from keel.replay.log import Say, compared, read_recording
from keel.replay.measurements import differences, split, summary


def _call(latency: float, tokens: int = 10, text: str = "hi") -> ModelCalled:
    return ModelCalled(
        model="gpt-4.1",
        tier="default",
        input_tokens=tokens,
        output_tokens=2,
        latency_ms=latency,
        cost=0.5,
        metadata={"request": {"messages": []}, "reply": {"role": "assistant", "content": text}},
    )


def test_model_calls_stage_timings_and_timestamps_are_measurements() -> None:
    behaviour, measured = split(encode_event(_call(812.5)))
    assert measured == {
        "timestamp": 0.0,
        "latency_ms": 812.5,
        "input_tokens": 10,
        "output_tokens": 2,
        "cost": 0.5,
    }
    assert behaviour["model"] == "gpt-4.1" and behaviour["tier"] == "default"
    assert behaviour["metadata"] == {"reply": {"role": "assistant", "content": "hi"}}
    behaviour, measured = split(encode_event(StageTimed(stage="model", duration_ms=3.5)))
    assert measured == {"timestamp": 0.0, "duration_ms": 3.5}
    assert behaviour["stage"] == "model" and "duration_ms" not in behaviour
    behaviour, measured = split(encode_event(BotMessage(text="ok", response_source="llm")))
    assert measured == {"timestamp": 0.0} and behaviour["text"] == "ok"


def test_only_events_that_behaved_the_same_have_their_measurements_compared() -> None:
    stored = compared([_call(812.5), StageTimed(stage="model", duration_ms=3.5), _call(40.0)])
    replayed = compared(
        [_call(0.0), StageTimed(stage="model", duration_ms=0.0), _call(0.0, text="other")]
    )
    assert stored[0].line == replayed[0].line and stored[2].line != replayed[2].line
    found = differences(stored, replayed)
    assert [(d.position, d.name, d.stored, d.replayed) for d in found] == [
        (0, "model_called.latency_ms", 812.5, 0.0),
        (1, "stage_timed.duration_ms", 3.5, 0.0),
    ]
    assert summary(found) == (
        "measurements differ (reported, not behaviour): "
        "model_called.latency_ms in 1 event(s), stage_timed.duration_ms in 1 event(s)"
    )
    assert summary(differences(stored, stored)) is None


def test_a_log_gives_back_session_metadata_button_titles_request_times_and_usage() -> None:
    metadata = {"customer_id": "BW100234", "channel": "web"}
    events = [
        TurnStarted(turn_id="t1", timestamp=100.0),
        SessionStarted(timestamp=100.0),
        MemorySet(key=SESSION_METADATA_KEY, value=metadata, timestamp=100.0),
        BotTurnEnded(timestamp=100.5),
        TurnStarted(turn_id="t2", timestamp=100.5),
        UserMessage(text="hello", message_id="m1", timestamp=100.5),
        _call(812.5, tokens=1234),
        BotTurnEnded(timestamp=101.5),
        TurnStarted(turn_id="t3", timestamp=160.0),
        UserMessage(text="set:x=1", message_id="m2", button_title="One", is_button_payload=True),
        BotTurnEnded(timestamp=160.2),
    ]
    recording = read_recording(events)
    assert recording.steps == (
        Say(text="hello", metadata=metadata, at=100.0),
        Say(text="set:x=1", metadata={"button_title": "One"}, at=160.0),
    )
    assert recording.with_model
    assert [(c.model, c.usage) for c in recording.calls] == [
        ("gpt-4.1", Usage(input_tokens=1234, output_tokens=2))
    ]
    assert not read_recording(events[:6]).with_model
