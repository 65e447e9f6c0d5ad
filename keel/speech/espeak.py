"""Local speech synthesis with Debian's `espeak-ng` (no account, no download at run time).

`EspeakTts.synthesize` speaks the text sentence by sentence (`keel.speech.sentences`): one
`espeak-ng --stdout` process per sentence, the text on its standard input (never on the
command line), its WAV stream read as it is written, resampled from espeak's 22 050 Hz
to the caller's rate and yielded chunk by chunk, so the first chunk leaves after the first
sentence's first few milliseconds of synthesis. Closing the iterator (barge-in) kills the
running process.

The voice comes from the language: `en-US` -> espeak's `en-us`, `de-DE` -> `de` (the first
voice whose name is the whole tag, else its primary language), unless `voice` or the
channel's `language_map` names one. A missing binary is a `speech.tts.espeak_missing`
error when speaking and a warning when the engines are built (`keel.speech.factory`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import struct
import subprocess
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from keel.speech.audio import Resampler
from keel.speech.ports import SpeechError
from keel.speech.sentences import split_sentences

ESPEAK_BINARIES = ("espeak-ng", "espeak")
ESPEAK_RATE = 22050
"""espeak-ng's output sample rate."""
DEFAULT_SPEED_WPM = 150
"""espeak's words per minute (its own default is 175; slower is easier to follow on the
phone and to recognise)."""
DEFAULT_VARIANT = "f2"
"""espeak's voice variant added to the language's voice (`en-us+f2`): of the variants we
measured it is the one pocketsphinx recognises best (docs/voice.md, Engines)."""
DEFAULT_VOICE = "en-us"
READ_BYTES = 4096
INSTALL_HINT = "install Debian's espeak-ng (`apt-get install espeak-ng`) or choose another TTS"


class EspeakMissing(SpeechError):
    """No `espeak-ng` binary on PATH."""

    code = "speech.tts.espeak_missing"


class EspeakFailed(SpeechError):
    """`espeak-ng` exited with an error or wrote something that is not a WAV stream."""

    code = "speech.tts.espeak_failed"


def find_espeak() -> str | None:
    """Path of `espeak-ng` (or the older `espeak`), if installed."""
    for name in ESPEAK_BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def list_voices(binary: str) -> tuple[str, ...]:
    """The language names of espeak's voices (`en-us`, `de`, ...), lower case."""
    try:
        done = subprocess.run(
            [binary, "--voices"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    names = []
    for line in done.stdout.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2:
            names.append(parts[1].lower())
    return tuple(names)


def voice_for(language: str, voices: tuple[str, ...]) -> str:
    """espeak's voice for a BCP 47 tag: the whole tag, else its primary language, else en-us."""
    tag = language.strip().lower().replace("_", "-")
    if tag in voices:
        return tag
    primary = tag.split("-", 1)[0]
    for candidate in (primary, f"{primary}-{primary}"):
        if candidate in voices:
            return candidate
    region = next((v for v in voices if v.startswith(primary + "-")), None)
    return region or DEFAULT_VOICE


@dataclass(frozen=True, kw_only=True)
class EspeakSettings:
    """How `EspeakTts` speaks."""

    voice: str | None = None
    """An espeak voice (`en-us`, `en-gb`, `en-us+f3`); None: from the language."""
    variant: str | None = DEFAULT_VARIANT
    """Added as `+variant` to a voice chosen from the language (not to `voice`); None: none."""
    speed_wpm: int = DEFAULT_SPEED_WPM
    pitch: int | None = None
    """0-99; None: the voice's own."""
    language_map: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """BCP 47 tag -> espeak voice, from the channel's `tts.language_map`."""


class EspeakTts:
    """`Tts` on the `espeak-ng` command."""

    def __init__(
        self, settings: EspeakSettings | None = None, *, binary: str | None = None
    ) -> None:
        self.settings = settings or EspeakSettings()
        self._binary = binary if binary is not None else find_espeak()
        self._voices: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        """`espeak`."""
        return "espeak"

    @property
    def available(self) -> bool:
        """True when the binary was found."""
        return self._binary is not None

    def voice(self, language: str) -> str:
        """The voice used for `language`."""
        mapped = self.settings.language_map.get(language) or self.settings.voice
        if mapped:
            return mapped
        if self._voices is None:
            self._voices = list_voices(self._binary) if self._binary else ()
        voice = voice_for(language, self._voices)
        return f"{voice}+{self.settings.variant}" if self.settings.variant else voice

    async def synthesize(
        self, text: str, *, sample_rate: int, language: str = "en-US"
    ) -> AsyncIterator[bytes]:
        """PCM16 at `sample_rate`, sentence by sentence, chunk by chunk."""
        if self._binary is None:
            raise EspeakMissing(f"espeak-ng is not installed; {INSTALL_HINT}")
        voice = self.voice(language)
        for sentence in split_sentences(text):
            spoken = self._sentence(self._binary, sentence, voice, sample_rate)
            async with contextlib.aclosing(spoken):
                async for chunk in spoken:
                    yield chunk

    def _command(self, binary: str, voice: str) -> list[str]:
        command = [binary, "--stdout", "-b", "1", "-v", voice, "-s", str(self.settings.speed_wpm)]
        if self.settings.pitch is not None:
            command += ["-p", str(self.settings.pitch)]
        return command

    async def _sentence(
        self, binary: str, sentence: str, voice: str, sample_rate: int
    ) -> AsyncGenerator[bytes, None]:
        process = await asyncio.create_subprocess_exec(
            *self._command(binary, voice),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(sentence.encode("utf-8") + b"\n")
            process.stdin.close()
            rate, pending = await _read_header(process.stdout)
            resampler = Resampler(rate, sample_rate)
            carry = pending
            while True:
                data = await process.stdout.read(READ_BYTES)
                if not data:
                    break
                data, carry = carry + data, b""
                if len(data) % 2:
                    data, carry = data[:-1], data[-1:]
                out = resampler.process(data)
                if out:
                    yield out
            tail = resampler.flush()
            if tail:
                yield tail
            if await process.wait() != 0:
                problem = b""
                if process.stderr is not None:
                    problem = await process.stderr.read()
                message = problem.decode(errors="replace").strip()[-300:]
                raise EspeakFailed(f"espeak-ng failed on voice {voice!r}: {message}")
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()


async def _read_header(stdout: asyncio.StreamReader) -> tuple[int, bytes]:
    """Read the WAV header espeak writes first; (sample rate, PCM already read past it)."""
    try:
        head = await stdout.readexactly(12)
    except asyncio.IncompleteReadError as exc:
        raise EspeakFailed("espeak-ng wrote no audio") from exc
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise EspeakFailed("espeak-ng's output is not a WAV stream")
    rate = ESPEAK_RATE
    while True:
        try:
            chunk = await stdout.readexactly(8)
        except asyncio.IncompleteReadError as exc:
            raise EspeakFailed("espeak-ng's WAV stream has no data chunk") from exc
        kind, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
        if kind == b"data":
            return rate, b""
        body = await stdout.readexactly(size)
        if kind == b"fmt ":
            channels, rate = struct.unpack("<HI", body[2:8])
            (width,) = struct.unpack("<H", body[14:16])
            if channels != 1 or width != 16:
                raise EspeakFailed("espeak-ng's WAV stream is not 16-bit mono")
