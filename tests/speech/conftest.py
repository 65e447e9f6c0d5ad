"""Fixtures of the speech tests: Debian's espeak-ng (installed with apt-get when missing).

* `espeak_path` (session): the `espeak-ng` binary, installed with apt-get when it is
  missing and the tests run as root (the way tests/ui installs Chromium). Without it the
  tests that speak are skipped with the reason, unless `KEEL_REQUIRE_SPEECH=1` (or CI=true):
  then they fail.
* `spoken` (session): a cache of utterances synthesised by the local TTS, as PCM16 at a
  given rate (`spoken("yes please", 16000)`).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from keel.speech.espeak import EspeakTts, find_espeak

REQUIRE_SPEECH = os.environ.get("KEEL_REQUIRE_SPEECH") == "1" or os.environ.get("CI") == "true"
INSTALL_TIMEOUT = 600
"""Seconds apt-get may take (each of update and install)."""


def install_espeak() -> str:
    """Install Debian's `espeak-ng` with apt-get (as root); '' or what went wrong."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "-o",
        "DPkg::Lock::Timeout=300",
        "espeak-ng",
    ]
    try:
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
        if done.returncode != 0:  # the package lists may be missing or stale
            subprocess.run(
                ["apt-get", "update"], env=env, capture_output=True, timeout=INSTALL_TIMEOUT
            )
            done = subprocess.run(
                install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if done.returncode == 0 else done.stderr.strip()[-500:]


def ensure_espeak() -> str:
    """The espeak-ng binary, installed now when missing (root); skips or fails without it."""
    found = find_espeak()
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        problem = install_espeak()
        found = find_espeak()
        if found is None:
            _unavailable(f"espeak-ng is not installed and apt-get could not install it: {problem}")
    if found is None:
        _unavailable(
            "espeak-ng is not installed; `apt-get install espeak-ng`, or run the tests as root "
            "to have them install it"
        )
    assert found is not None
    return found


def _unavailable(reason: str) -> None:
    if REQUIRE_SPEECH:
        pytest.fail(f"{reason}; KEEL_REQUIRE_SPEECH=1 / CI makes the speech tests mandatory")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def espeak_path() -> str:
    """Debian's espeak-ng, installed now when missing and running as root."""
    return ensure_espeak()


def synthesize_sync(text: str, sample_rate: int) -> bytes:
    """`text` spoken by the local TTS (default settings), all chunks joined."""

    async def run() -> bytes:
        tts = EspeakTts()
        out = b""
        async for chunk in tts.synthesize(text, sample_rate=sample_rate):
            out += chunk
        return out

    # A thread of its own: callers may be inside a running event loop (async tests).
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run()).result()


@pytest.fixture(scope="session")
def spoken(espeak_path: str) -> Callable[[str, int], bytes]:
    """Utterances synthesised once per session: `spoken(text, sample_rate)`."""
    cache: dict[tuple[str, int], bytes] = {}

    def get(text: str, sample_rate: int) -> bytes:
        key = (text, sample_rate)
        if key not in cache:
            cache[key] = synthesize_sync(text, sample_rate)
        return cache[key]

    return get
