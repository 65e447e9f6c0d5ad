"""Local streaming speech recognition with CMU PocketSphinx (its wheel carries the en-US model).

A stream resamples what it is fed to the model's 16 kHz, cuts it into utterances with
WebRTC's VAD (`keel.speech.vad`) and decodes each utterance as it arrives:

- `speech_start` opens an utterance, with `pre_roll_ms` of the audio before it (the VAD
  needs a few frames to be sure, and the first phone must not be lost);
- every `interim_ms` of speech the partial hypothesis, when it changed, is an interim
  transcript (`is_final=False`);
- `silence_ms` of silence (300 ms by default, shorter than the channel's end-of-utterance
  silence so the final is there when the channel decides the caller is done) or `close`
  ends the utterance: its best hypothesis is the final transcript.

Decoding runs in a worker thread, one call at a time per stream, so the event loop stays
free. Decoders take a fraction of a second to load; `PocketsphinxAsr` keeps the ones of
closed streams for the next stream (`warm` loads one ahead).

**Phrase bias** (`phrases`): pocketsphinx cannot boost words inside its general language
model, so a list of phrases replaces it with a small trigram model built from them
(pocketsphinx's own ARPA builder) and a dictionary of just their words. Recognition is then
limited to those words, which makes short agent phrases ("yes please", "talk to a human",
"check my order status") far more reliable; words missing from the en-US dictionary cannot be
recognised and are listed in `PhraseModel.unknown` (the factory warns about them).
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pocketsphinx import Decoder, get_model_path
from pocketsphinx.lm import ArpaBoLM

from keel.speech.audio import FrameBuffer, Resampler
from keel.speech.ports import SpeechError, Transcript
from keel.speech.vad import VadSettings, WebRtcVad

MODEL_RATE = 16000
"""The sample rate of pocketsphinx's en-US acoustic model."""
MODEL_LANGUAGE = "en-US"
MAX_IDLE_DECODERS = 4
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")

logger = logging.getLogger(__name__)


class PocketsphinxError(SpeechError):
    """The decoder could not be loaded or failed on audio."""

    code = "speech.asr.pocketsphinx"


@dataclass(frozen=True, kw_only=True)
class PocketsphinxSettings:
    """How `PocketsphinxAsr` segments and decodes."""

    phrases: tuple[str, ...] = ()
    """Bias: recognise only these phrases' words (see the module docstring); () = general."""
    interim_ms: int = 250
    """Speech audio between two interim transcripts."""
    silence_ms: int = 300
    """Trailing silence that ends an utterance (its final transcript)."""
    pre_roll_ms: int = 300
    """Audio before the detected speech start given to the decoder."""
    aggressiveness: int = 2
    """WebRTC VAD mode used for segmenting (0-3)."""


@lru_cache(maxsize=1)
def _dictionary_lines() -> tuple[tuple[str, str], ...]:
    """(word, line) of pocketsphinx's en-US pronunciation dictionary."""
    path = Path(get_model_path("en-us/cmudict-en-us.dict"))
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        head = line.split(" ", 1)[0]
        lines.append((head.split("(", 1)[0], line))
    return tuple(lines)


def phrase_words(phrase: str) -> list[str]:
    """The lower-case words of a phrase, punctuation dropped."""
    return _WORD.findall(phrase.lower())


class PhraseModel:
    """A trigram language model and a dictionary made from a list of phrases (files on disk)."""

    def __init__(self, phrases: Sequence[str]) -> None:
        sentences = [" ".join(phrase_words(p)) for p in phrases]
        sentences = [s for s in sentences if s]
        if not sentences:
            raise PocketsphinxError("asr phrases hold no words")
        vocabulary = {w for s in sentences for w in s.split()}
        lines = [line for word, line in _dictionary_lines() if word in vocabulary]
        known = {line.split(" ", 1)[0].split("(", 1)[0] for line in lines}
        self.unknown: tuple[str, ...] = tuple(sorted(vocabulary - known))
        """Words of the phrases the en-US dictionary does not have (never recognised)."""
        self.words: tuple[str, ...] = tuple(sorted(known))
        if not known:
            raise PocketsphinxError("none of the asr phrases' words is in the en-US dictionary")
        builder = ArpaBoLM(text="\n".join(sentences), add_start=True)
        builder.compute()
        arpa = io.StringIO()
        builder.write(arpa)
        self._dir = tempfile.TemporaryDirectory(prefix="keel-asr-")
        self.lm_path = Path(self._dir.name) / "phrases.arpa"
        self.dict_path = Path(self._dir.name) / "phrases.dict"
        self.lm_path.write_text(arpa.getvalue(), encoding="utf-8")
        self.dict_path.write_text("".join(lines), encoding="utf-8")


class PocketsphinxAsr:
    """`Asr` on pocketsphinx."""

    def __init__(self, settings: PocketsphinxSettings | None = None) -> None:
        self.settings = settings or PocketsphinxSettings()
        self.phrase_model = PhraseModel(self.settings.phrases) if self.settings.phrases else None
        self._idle: list[Decoder] = []
        self._initial_cmn: str | None = None
        self._warned_languages: set[str] = set()

    @property
    def name(self) -> str:
        """`pocketsphinx`."""
        return "pocketsphinx"

    def _new_decoder(self) -> Decoder:
        options: dict[str, object] = {"samprate": MODEL_RATE, "loglevel": "FATAL"}
        if self.phrase_model is not None:
            options["lm"] = str(self.phrase_model.lm_path)
            options["dict"] = str(self.phrase_model.dict_path)
        try:
            decoder = Decoder(**options)
        except (RuntimeError, ValueError) as exc:
            raise PocketsphinxError(f"pocketsphinx could not load its model: {exc}") from exc
        if self._initial_cmn is None:
            self._initial_cmn = str(decoder.get_cmn())
        return decoder

    async def warm(self) -> None:
        """Load one decoder now, so the first stream opens at once."""
        if not self._idle:
            self._idle.append(await asyncio.to_thread(self._new_decoder))

    async def _acquire(self) -> Decoder:
        if self._idle:
            return self._idle.pop()
        return await asyncio.to_thread(self._new_decoder)

    def _release(self, decoder: Decoder) -> None:
        """Keep a closed stream's decoder, its cepstral mean reset (the next caller is
        another voice on another line)."""
        if len(self._idle) < MAX_IDLE_DECODERS:
            if self._initial_cmn is not None:
                decoder.set_cmn(self._initial_cmn)
            self._idle.append(decoder)

    async def open(self, *, sample_rate: int, language: str = MODEL_LANGUAGE) -> PocketsphinxStream:
        """A stream of audio at `sample_rate`; only English is recognised (the shipped model)."""
        if not language.lower().startswith("en") and language not in self._warned_languages:
            self._warned_languages.add(language)
            logger.warning(
                "pocketsphinx ships only an en-US model; %s speech is recognised as English",
                language,
            )
        decoder = await self._acquire()
        return PocketsphinxStream(
            decoder=decoder, sample_rate=sample_rate, settings=self.settings, release=self._release
        )


_END = object()


class PocketsphinxStream:
    """One recognition stream (`AsrStream`)."""

    def __init__(
        self,
        *,
        decoder: Decoder,
        sample_rate: int,
        settings: PocketsphinxSettings,
        release: Callable[[Decoder], None],
    ) -> None:
        if sample_rate <= 0:
            raise PocketsphinxError(f"sample rate must be positive, got {sample_rate}")
        self._decoder = decoder
        self._settings = settings
        self._release = release
        self._resampler = Resampler(sample_rate, MODEL_RATE)
        vad_settings = VadSettings(
            aggressiveness=settings.aggressiveness, frame_ms=20, silence_ms=settings.silence_ms
        )
        self._vad = WebRtcVad(sample_rate=MODEL_RATE, settings=vad_settings)
        self._frames = FrameBuffer(sample_rate=MODEL_RATE, frame_ms=vad_settings.frame_ms)
        self._pre_roll: deque[bytes] = deque(maxlen=max(1, settings.pre_roll_ms // 20))
        self._queue: asyncio.Queue[Transcript | object] = asyncio.Queue()
        self._lock = asyncio.Lock()
        self._in_utterance = False
        self._utterance_start = 0
        self._since_interim = 0
        self._last_interim = ""
        self._closed = False

    async def feed(self, pcm: bytes) -> None:
        """Decode more audio (PCM16 at the stream's rate)."""
        if self._closed:
            raise PocketsphinxError("feed after close")
        async with self._lock:
            found = await asyncio.to_thread(self._feed_sync, pcm)
        for transcript in found:
            self._queue.put_nowait(transcript)

    async def close(self) -> None:
        """Decode what is left, deliver the last final, end `results()`."""
        if self._closed:
            return
        self._closed = True
        found: list[Transcript] = []
        try:
            async with self._lock:
                found = await asyncio.to_thread(self._close_sync)
        finally:
            for transcript in found:
                self._queue.put_nowait(transcript)
            self._queue.put_nowait(_END)

    async def results(self) -> AsyncIterator[Transcript]:
        """Transcripts in order until the stream is closed."""
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            assert isinstance(item, Transcript)
            yield item

    # ---- in the worker thread

    def _feed_sync(self, pcm: bytes) -> list[Transcript]:
        found: list[Transcript] = []
        for frame in self._frames.push(self._resampler.process(pcm)):
            self._frame(frame, found)
        return found

    def _close_sync(self) -> list[Transcript]:
        found: list[Transcript] = []
        try:
            for frame in self._frames.push(self._resampler.flush()):
                self._frame(frame, found)
            rest = self._frames.rest()
            if rest:
                self._frame(rest, found)
            if self._in_utterance:
                self._finish(self._vad.position_ms, found)
        finally:
            self._release(self._decoder)
        return found

    def _frame(self, frame: bytes, found: list[Transcript]) -> None:
        event = self._vad.process(frame)
        if not self._in_utterance:
            self._pre_roll.append(frame)
            if event is not None and event.kind == "speech_start":
                self._start(event.at_ms)
            return
        self._decoder.process_raw(frame, False, False)
        self._since_interim += self._vad.frame_ms
        if event is not None and event.kind == "speech_end":
            self._finish(event.at_ms, found)
        elif self._since_interim >= self._settings.interim_ms:
            self._since_interim = 0
            self._interim(found)

    def _start(self, at_ms: int) -> None:
        self._in_utterance = True
        self._utterance_start = at_ms
        self._since_interim = 0
        self._last_interim = ""
        self._decoder.start_utt()
        self._decoder.process_raw(b"".join(self._pre_roll), False, False)
        self._pre_roll.clear()

    def _interim(self, found: list[Transcript]) -> None:
        hyp = self._decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        if text and text != self._last_interim:
            self._last_interim = text
            found.append(
                Transcript(
                    text=text,
                    is_final=False,
                    start_ms=self._utterance_start,
                    end_ms=self._vad.position_ms,
                )
            )

    def _finish(self, end_ms: int, found: list[Transcript]) -> None:
        self._in_utterance = False
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        text = hyp.hypstr.strip() if hyp is not None else ""
        if text:
            found.append(
                Transcript(text=text, is_final=True, start_ms=self._utterance_start, end_ms=end_ms)
            )
