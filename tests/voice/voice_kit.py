"""The voice tests' real `keel run` of a voice project (`serve`), with known keys."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "server"))
from live_server import live_server

ROOT = Path(__file__).resolve().parents[2]
VOICE_EXAMPLE = ROOT / "examples" / "voice"
KEY = "voice-test-secret"
KEYS = f"caller:chat:{KEY};ops:admin:voice-admin-secret"


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
