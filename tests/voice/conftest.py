"""Fixtures of the voice channel tests: Debian's espeak-ng (installed with apt-get when it is
missing and the tests run as root, as tests/ui installs Chromium) and a real `keel run`
serving the voice example with a scripted model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "server"))
from live_server import live_server

ROOT = Path(__file__).resolve().parents[2]
VOICE_EXAMPLE = ROOT / "examples" / "voice"
KEY = "voice-test-secret"
KEYS = f"caller:chat:{KEY};ops:admin:voice-admin-secret"
INSTALL_TIMEOUT = 600


def _install_espeak() -> str:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", "-o"]
    install += ["DPkg::Lock::Timeout=300", "espeak-ng"]
    try:
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
        )
        if done.returncode != 0:
            subprocess.run(
                ["apt-get", "update"], env=env, capture_output=True, timeout=INSTALL_TIMEOUT
            )
            done = subprocess.run(
                install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if done.returncode == 0 else done.stderr.strip()[-500:]


@pytest.fixture(scope="session")
def espeak() -> str:
    """The espeak-ng binary, installed now when missing (as root)."""
    found = shutil.which("espeak-ng")
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        problem = _install_espeak()
        found = shutil.which("espeak-ng")
        if found is None:
            pytest.fail(f"espeak-ng is missing and apt-get could not install it: {problem}")
    if found is None:
        pytest.fail("espeak-ng is missing: apt-get install espeak-ng (or run the tests as root)")
    return found


@dataclass(frozen=True, kw_only=True)
class Served:
    """A running `keel run` of a voice project."""

    base_url: str
    db_path: Path
    log_path: Path
    """The server's output (its warnings: the speech engines chosen)."""
    key: str = KEY

    @property
    def ws_url(self) -> str:
        """The server's base URL with the WebSocket scheme."""
        return "ws" + self.base_url.removeprefix("http")


def serve(
    project: Path, script: str, tmp_path: Path, env: dict[str, str] | None = None
) -> Iterator[Served]:
    """`keel run project --model scripted:<script>` on a free loopback port. No Deepgram
    key reaches it from the test's environment unless `env` passes one."""
    script_file = tmp_path / "script.yml"
    script_file.write_text(script, encoding="utf-8")
    db_path = tmp_path / "voice.db"
    server_env = {
        "KEEL_API_KEYS": KEYS,
        "KEEL_DATABASE_URL": f"sqlite:///{db_path}",
        "KEEL_RATE_LIMIT": "off",
        "DEEPGRAM_API_KEY": "",
        "KEEL_DEEPGRAM_URL": "",
        **(env or {}),
    }
    args = [str(project), "--model", f"scripted:{script_file}"]
    with live_server(args, env=server_env, cwd=tmp_path) as base:
        port = base.rsplit(":", 1)[1]
        yield Served(base_url=base, db_path=db_path, log_path=tmp_path / f"server-{port}.log")
