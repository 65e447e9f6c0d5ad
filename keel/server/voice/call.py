"""`VoiceCall`: one caller on a voice channel, from audio in to audio out (spec §7, §9.4).

The channel (Twilio Media Streams, the browser page) decodes its wire format and hands the
call PCM16 audio (`audio`), the playback marks its client acknowledges (`played`) and the
end of the call (`close`); the call talks back through a `VoiceSink`: audio to play, marks,
`clear` (stop playback at once), transcripts and hang-up.

Inside, for every inbound frame:

* the channel's VAD (`keel.speech.Vad`) decides when the caller starts and stops speaking;
  the ASR stream (`keel.speech.AsrStream`) is fed the same audio and yields interim and
  final transcripts on its own;
* **end of speech**: once the VAD says the caller stopped and at least one final
  transcript is in, the finals since the last turn are one user message (several are
  merged, `metadata.merged_transcripts`), handed to the engine as a turn (the server's
  `RunRegistry`, so the Inspector and cancellation see it like any other). A final that
  comes after the VAD's end, or after the answer has started, is still handled: nothing
  said is dropped;
* the turn's bot messages are spoken as they are committed (a filler while a slow tool
  runs, then the answer), each in its spoken form (`keel.loop.spoken`), synthesised
  sentence by sentence and sent as it comes; a mark follows each message, and the client
  echoes it once played;
* **barge-in**: speech that starts while the agent is answering (its turn running, audio
  unsent or unplayed) stops playback at once (`clear`), cancels the turn if it still runs
  (seed 002: at its current await; memory written is kept; the step runs again next turn)
  and records a `barge_in` event with what the caller did not hear, after the cancelled
  turn ended; the new utterance is then handled as usual. With barge-in off
  (`interruptions.enabled: false`) the caller's speech waits for the answer to finish;
* `action: hangup` (the conversation `ended`) ends the call once its audio was played.

The call opens with `/session_start` (with `channel: voice` and the call's metadata, so
the conversation is in voice mode, `keel.loop.voice`) and the caller's hang-up sends
`/session_end`. Turns run one at a time, in order, from one queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from keel.events.base import JsonValue
from keel.events.model import BotMessage, ConversationStateChanged, TurnStarted
from keel.events.voice import BargeIn
from keel.loop.control import SESSION_END, SESSION_START
from keel.loop.spoken import spoken_text
from keel.loop.voice import CHANNEL_KEY, VOICE
from keel.server.errors import ApiError
from keel.server.feed import Finished, Logged
from keel.server.runs import TurnRun
from keel.server.runtime import ServerRuntime
from keel.server.turns import start_message
from keel.server.voice.engines import SpeechEngines
from keel.speech.audio import FrameBuffer, Resampler
from keel.speech.ports import AsrStream, SpeechError, Transcript

_log = logging.getLogger("keel.voice")

Role = Literal["user", "agent"]


class VoiceSink(Protocol):
    """Where a call's output goes (the channel's wire protocol)."""

    async def play(self, pcm: bytes) -> None:
        """Agent audio, PCM16 at the call's output rate, in order."""

    async def mark(self, name: str) -> None:
        """A playback marker after the audio sent so far; the client acknowledges it once
        played (`VoiceCall.played`)."""

    async def clear(self) -> None:
        """Stop playback at once and drop the audio not yet played."""

    async def transcript(self, role: Role, text: str, *, final: bool) -> None:
        """What the caller said (interim or final) or what the agent says."""

    async def hangup(self) -> None:
        """End the call (after its last audio was played)."""


@dataclass(frozen=True, kw_only=True)
class CallSettings:
    """One call's settings."""

    conversation_key: str
    """The conversation's store key (owner and id, `keel.server.owners.store_key`)."""
    input_rate: int
    """Sample rate of the PCM16 the channel passes to `audio`."""
    output_rate: int
    """Sample rate of the agent audio the sink plays."""
    barge_in: bool = True
    language: str = "en-US"
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)
    """Channel metadata for the session start (`call_id`, `stream_id`, ...)."""


@dataclass(frozen=True, kw_only=True)
class TurnTiming:
    """How fast one turn answered (for `bench/voice` and the docs' latency figures)."""

    text: str
    first_audio_ms: float | None
    """From the end-of-speech decision to the first agent audio frame sent."""


@dataclass(kw_only=True)
class _Clock:
    """One user turn's latency, measured as its first audio leaves (which may be after
    the turn ended: the turn's messages are synthesised as they come)."""

    text: str
    decided_at: float
    said: int = 0
    """Bot messages of the turn handed to the player."""
    recorded: bool = False


@dataclass(kw_only=True)
class _Spoken:
    """A bot message on its way to the caller."""

    text: str
    turn_id: str | None
    mark: str = ""
    sent: bool = False
    clock: _Clock | None = None
    """The turn's latency clock, while its first audio is still to be sent."""


@dataclass(frozen=True, kw_only=True)
class _Utterance:
    text: str
    metadata: Mapping[str, JsonValue]
    decided_at: float | None = None


_QueueItem = _Utterance | BargeIn | None


class VoiceCall:
    """One call: audio in, turns run, audio out."""

    def __init__(
        self,
        *,
        runtime: ServerRuntime,
        engines: SpeechEngines,
        sink: VoiceSink,
        settings: CallSettings,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.runtime = runtime
        self.engines = engines
        self.sink = sink
        self.settings = settings
        self.clock = clock
        self.timings: list[TurnTiming] = []
        """One entry per user turn, in order."""
        self.barge_ins: list[BargeIn] = []
        self.vad = engines.new_vad(settings.input_rate)
        self._frames = FrameBuffer(sample_rate=self.vad.sample_rate, frame_ms=self.vad.frame_ms)
        self._to_vad = Resampler(settings.input_rate, self.vad.sample_rate)
        self._asr: AsrStream | None = None
        self._queue: asyncio.Queue[_QueueItem] = asyncio.Queue()
        self._speech: asyncio.Queue[_Spoken] = asyncio.Queue()
        self._finals: list[Transcript] = []
        self._run: TurnRun | None = None
        self._run_turn: str | None = None
        self._unplayed: dict[str, _Spoken] = {}
        self._current: _Spoken | None = None
        self._marks = 0
        self._turn_clock: _Clock | None = None
        self._ended = False
        self._closing = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[None]] = []
        self._player: asyncio.Task[None] | None = None

    # -- the channel's side -------------------------------------------------------------

    async def start(self) -> None:
        """Open recognition and start the call with `/session_start`."""
        self._asr = await self.engines.asr.open(
            sample_rate=self.settings.input_rate, language=self.settings.language
        )
        self._tasks = [
            asyncio.ensure_future(self._read_transcripts(self._asr)),
            asyncio.ensure_future(self._dispatch()),
        ]
        self._player = asyncio.ensure_future(self._play())
        self._queue.put_nowait(_Utterance(text=SESSION_START, metadata=self._metadata()))

    async def audio(self, pcm: bytes) -> None:
        """Caller audio (PCM16 at `input_rate`)."""
        if self._closing or self._asr is None:
            return
        await self._asr.feed(pcm)
        for frame in self._frames.push(self._to_vad.process(pcm)):
            event = self.vad.process(frame)
            if event is None:
                continue
            if event.kind == "speech_start":
                await self._speech_started(event.at_ms)
            else:
                self._maybe_dispatch()

    @property
    def hung_up(self) -> bool:
        """The agent ended the call (`action: hangup`)."""
        return self._ended

    def played(self, name: str) -> None:
        """The client played the audio up to mark `name`."""
        self._unplayed.pop(name, None)
        self._check_idle()

    async def close(self, *, hung_up: bool = True) -> None:
        """The call ended: the running turn is cancelled (the caller is gone), recognition
        is closed and, when the caller hung up, `/session_end` runs (spec §7.7)."""
        if self._closing:
            return
        self._closing = True
        await self._stop_playback()
        if self._run is not None:
            self._run.cancel()
        if self._asr is not None:
            with contextlib.suppress(SpeechError):
                await self._asr.close()
        if hung_up and not self._ended:
            self._queue.put_nowait(_Utterance(text=SESSION_END, metadata=self._metadata()))
        self._queue.put_nowait(None)
        dispatcher = self._tasks[1] if len(self._tasks) > 1 else None
        if dispatcher is not None:
            await asyncio.gather(dispatcher, return_exceptions=True)
        for task in [*self._tasks, *([self._player] if self._player else [])]:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._player is not None:
            await asyncio.gather(self._player, return_exceptions=True)

    # -- recognition and end of speech --------------------------------------------------

    def _metadata(self) -> dict[str, JsonValue]:
        return {**self.settings.metadata, CHANNEL_KEY: VOICE}

    async def _read_transcripts(self, stream: AsrStream) -> None:
        async for result in stream.results():
            if not result.text.strip():
                continue
            await self.sink.transcript("user", result.text, final=result.is_final)
            if result.is_final:
                self._finals.append(result)
                self._maybe_dispatch()

    def _maybe_dispatch(self) -> None:
        """End of speech: the caller is silent and what they said is recognised."""
        if self.vad.speaking or not self._finals or self._closing:
            return
        finals, self._finals = self._finals, []
        texts = [f.text.strip() for f in finals]
        metadata = self._metadata()
        if len(texts) > 1:
            metadata["merged_transcripts"] = list(texts)
        self._queue.put_nowait(
            _Utterance(text=" ".join(texts), metadata=metadata, decided_at=self.clock())
        )

    # -- barge-in -----------------------------------------------------------------------

    def answering(self) -> bool:
        """The agent is answering: a turn runs, or its audio is unsent or unplayed."""
        return self._run is not None or not self._idle.is_set()

    async def _speech_started(self, at_ms: int) -> None:
        if not self.settings.barge_in or not self.answering():
            return
        detected = self.clock()
        await self.sink.clear()
        reaction_ms = (self.clock() - detected) * 1000
        cut = await self._stop_playback()
        cancelled = self._run is not None and self._run.cancel()
        turn_id = self._run_turn or (cut[0].turn_id if cut else None)
        record = BargeIn(
            cut_text=" ".join(s.text for s in cut),
            cut_messages=len(cut),
            turn_cancelled=cancelled,
            turn_id=turn_id,
            speech_start_ms=at_ms,
            reaction_ms=round(reaction_ms, 3),
        )
        self.barge_ins.append(record)
        # Recorded in turn order: after the cancelled turn ended, before the next one.
        self._queue.put_nowait(record)

    async def _stop_playback(self) -> list[_Spoken]:
        """Stop speaking; the messages the caller did not hear (whole), in order."""
        cut = list(self._unplayed.values())
        if self._current is not None and self._current not in cut:
            cut.append(self._current)
        while not self._speech.empty():
            cut.append(self._speech.get_nowait())
        if self._player is not None:
            self._player.cancel()
            await asyncio.gather(self._player, return_exceptions=True)
        for spoken in cut:
            if spoken.clock is not None:
                self._timed(spoken.clock, None)  # cut before its first audio
        self._unplayed.clear()
        self._current = None
        self._player = None if self._closing else asyncio.ensure_future(self._play())
        self._check_idle()
        return cut

    # -- turns --------------------------------------------------------------------------

    async def _dispatch(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            if isinstance(item, BargeIn):
                await self._record(item)
                continue
            try:
                await self._turn(item)
            except ApiError as exc:
                _log.warning("voice turn refused: %s %s", exc.code, exc.message)
            except Exception:  # a failed turn must not end the call
                _log.exception("voice turn failed (%s)", self.settings.conversation_key)

    async def _record(self, record: BargeIn) -> None:
        try:
            await self.runtime.engine.record(self.settings.conversation_key, record)
        except Exception:
            _log.exception("recording a barge-in failed (%s)", self.settings.conversation_key)

    async def _turn(self, utterance: _Utterance) -> None:
        if self._ended and utterance.text != SESSION_END:
            return
        self._turn_clock = (
            None
            if utterance.decided_at is None
            else _Clock(text=utterance.text, decided_at=utterance.decided_at)
        )
        run = start_message(
            self.runtime, self.settings.conversation_key, utterance.text, utterance.metadata
        )
        self._run, self._run_turn = run, None
        try:
            async for item in run.feed.follow(0):
                if isinstance(item, Finished):
                    break
                if not isinstance(item, Logged):
                    continue
                event = item.event
                if isinstance(event, TurnStarted):
                    self._run_turn = event.turn_id
                elif isinstance(event, BotMessage) and utterance.text != SESSION_END:
                    self._say(event)
                elif isinstance(event, ConversationStateChanged) and event.state == "ended":
                    self._ended = True
            await run.wait()
            key = self.settings.conversation_key
            while self.runtime.runs.active(key) is run:  # its done-callback is scheduled
                await asyncio.sleep(0)
        finally:
            self._run = None
            self._check_idle()
        turn_clock, self._turn_clock = self._turn_clock, None
        if turn_clock is not None and not turn_clock.said:
            self._timed(turn_clock, None)  # nothing to say
        if self._ended and not self._closing:
            await self._idle.wait()  # the goodbye is heard first
            await self.sink.hangup()

    def _timed(self, turn_clock: _Clock, first_audio: float | None) -> None:
        """Record the turn's latency once: its first audio frame was sent at `first_audio`
        (None: the turn said nothing, or it was cut before any audio)."""
        if turn_clock.recorded:
            return
        turn_clock.recorded = True
        first = None
        if first_audio is not None:
            first = round((first_audio - turn_clock.decided_at) * 1000, 3)
        _log.info(
            "voice turn: first audio %s ms after the end of speech",
            first,
            extra={"conversation_id": self.settings.conversation_key, "first_audio_ms": first},
        )
        self.timings.append(TurnTiming(text=turn_clock.text, first_audio_ms=first))

    # -- speaking -----------------------------------------------------------------------

    def _say(self, message: BotMessage) -> None:
        text = spoken_text(message)
        if not text:
            return
        self._idle.clear()
        turn_clock = self._turn_clock
        if turn_clock is not None:
            turn_clock.said += 1
        self._speech.put_nowait(_Spoken(text=text, turn_id=self._run_turn, clock=turn_clock))

    async def _play(self) -> None:
        """Speak the queued messages one after the other."""
        while True:
            spoken = await self._speech.get()
            self._current = spoken
            await self.sink.transcript("agent", spoken.text, final=True)
            try:
                chunks = self.engines.tts.synthesize(
                    spoken.text,
                    sample_rate=self.settings.output_rate,
                    language=self.settings.language,
                )
                try:
                    async for chunk in chunks:
                        await self.sink.play(chunk)
                        if spoken.clock is not None:  # the turn's first audio frame is out
                            self._timed(spoken.clock, self.clock())
                            spoken.clock = None
                finally:
                    aclose = getattr(chunks, "aclose", None)
                    if aclose is not None:
                        await aclose()
            except SpeechError as exc:
                _log.error("speech synthesis failed: %s", exc)
            self._marks += 1
            spoken.mark = f"m{self._marks}"
            self._unplayed[spoken.mark] = spoken
            self._current = None
            await self.sink.mark(spoken.mark)
            self._check_idle()

    def _check_idle(self) -> None:
        busy = self._current is not None or not self._speech.empty() or bool(self._unplayed)
        if busy:
            self._idle.clear()
        else:
            self._idle.set()
