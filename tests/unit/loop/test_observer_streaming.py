"""The engine streams the model's reply only for an observer that reads text
(`TurnObserver.reads_text`): a telemetry tap, which reads only committed events, gets the
reply through `complete`, the same events and no `text_delta`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

from keel.ids import FakeClock, SystemClock
from keel.llm.port import ModelRequest, StreamDone, StreamEvent, TextDelta
from keel.loop.engine import Engine
from keel.loop.observer import TurnObserver, reads_text
from keel.observe.tap import Telemetry, TurnTap
from keel.stores.memory import InMemoryEventStore
from keel.stores.port import StoredEvent
from keel.testing import ScriptedModel
from keel.testing.harness import load_definition

AGENT = Path(__file__).resolve().parent / "commits_agent"


class StreamingScript(ScriptedModel):
    """A scripted model that can also stream (each reply in two text pieces)."""

    def __init__(self, replies: list[object]) -> None:
        super().__init__(replies)  # type: ignore[arg-type]
        self.streamed = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.streamed += 1
        response = await self.complete(request)
        text = response.text or ""
        half = len(text) // 2
        for piece in (text[:half], text[half:]):
            yield TextDelta(text=piece)
        yield StreamDone(response=response)


class Reader:
    """An observer that reads the text (no `reads_text` attribute: the default)."""

    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.kinds: list[str] = []

    async def committed(self, events: Sequence[StoredEvent], started_at: float) -> None:
        self.kinds.extend(item.event.kind for item in events)

    async def text_delta(self, text: str) -> None:
        self.deltas.append(text)

    async def tool_started(self, name: str, arguments: Mapping[str, object]) -> None:
        """Not needed."""


class Blind(Reader):
    reads_text = False


async def _turn(observer: TurnObserver) -> tuple[StreamingScript, list[str]]:
    model = StreamingScript([{"text": "Hello there."}])
    engine = Engine(definition=load_definition(AGENT), store=InMemoryEventStore(), model=model)
    await engine.handle("c1", "/session_start")
    result = await engine.handle("c1", "hi", observer=observer)
    return model, [m.text for m in result.bot_messages]


async def test_an_observer_that_reads_text_gets_the_reply_streamed() -> None:
    reader = Reader()
    model, said = await _turn(reader)
    assert said == ["Hello there."]
    assert model.streamed == 1
    assert "".join(reader.deltas) == "Hello there."


async def test_an_observer_that_reads_no_text_gets_no_stream() -> None:
    blind = Blind()
    model, said = await _turn(blind)
    assert said == ["Hello there."]
    assert model.streamed == 0
    assert blind.deltas == []
    assert "bot_message" in blind.kinds


def test_a_telemetry_tap_reads_no_text() -> None:
    tap = Telemetry(clock=FakeClock()).tap("c1")
    assert isinstance(tap, TurnTap)
    assert reads_text(tap) is False
    assert reads_text(Reader()) is True


def test_a_tap_reads_the_injected_clock() -> None:
    clock = FakeClock()
    telemetry = Telemetry(clock=clock)
    assert telemetry.seconds() == clock.now().timestamp()
    clock.advance(2.5)
    assert telemetry.seconds() == clock.now().timestamp()
    system = SystemClock()
    assert Telemetry(clock=system).seconds == system.seconds
