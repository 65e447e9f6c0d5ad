"""`ServerSettings`: everything the app needs to know, as one value.

The CLI (`keel run`) builds it from options and environment variables; `create_app` takes
it as it is and reads no environment itself. To reach uvicorn worker processes the
settings travel as JSON in `KEEL_SERVER_SETTINGS` (`to_json` / `from_json`): keys travel
as digests with their salt, never as secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from keel.server.auth import ApiKey, KeyRing
from keel.server.ratelimit import RateLimit

SETTINGS_ENV = "KEEL_SERVER_SETTINGS"
"""The environment variable that hands the settings to worker processes."""

DEFAULT_MAX_BODY_BYTES = 256 * 1024


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerSettings:
    """How to serve one agent."""

    project: Path
    """The agent project folder."""

    database_url: str = "memory://"
    """The event store (`memory://`, `sqlite:///path`, ...), see `keel.stores.open_store`."""

    model: str | None = None
    """`scripted:FILE` for a scripted model; None for the agent's own model groups."""

    keys: KeyRing = field(default_factory=lambda: KeyRing(salt=b""))
    """API keys. With no key every authenticated endpoint answers 401."""

    rate_limit: RateLimit = field(default_factory=RateLimit)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Largest request body accepted; larger ones get 413."""

    cors_origins: tuple[str, ...] = ()
    """Origins whose pages may call the API from a browser (CORS); none by default."""

    rasa_no_key: bool = False
    """Rasa's channels (REST webhook, socket.io) take messages sent with no key, as the
    conversations of `RASA_LOCAL_OWNER`; `keel run` allows it on a loopback address only."""

    reload: bool = False
    """Watch the project folder and swap a changed agent in between turns (`keel run
    --reload`; one worker). A project with errors is logged and the old one kept."""

    def to_json(self) -> str:
        """The settings as JSON text (for `KEEL_SERVER_SETTINGS`)."""
        data = {
            "project": str(self.project),
            "database_url": self.database_url,
            "model": self.model,
            "salt": self.keys.salt.hex(),
            "keys": [
                {"name": k.name, "scopes": sorted(k.scopes), "digest": k.digest}
                for k in self.keys.keys
            ],
            "rate_limit": {
                "burst": self.rate_limit.burst,
                "per_second": self.rate_limit.per_second,
            },
            "max_body_bytes": self.max_body_bytes,
            "cors_origins": list(self.cors_origins),
            "rasa_no_key": self.rasa_no_key,
            "reload": self.reload,
        }
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> ServerSettings:
        """Settings written by `to_json`."""
        data = json.loads(text)
        keys = tuple(
            ApiKey(name=k["name"], scopes=frozenset(k["scopes"]), digest=k["digest"])
            for k in data["keys"]
        )
        rate = data["rate_limit"]
        return cls(
            project=Path(data["project"]),
            database_url=data["database_url"],
            model=data["model"],
            keys=KeyRing(salt=bytes.fromhex(data["salt"]), keys=keys),
            rate_limit=RateLimit(burst=rate["burst"], per_second=rate["per_second"]),
            max_body_bytes=int(data["max_body_bytes"]),
            cors_origins=tuple(data.get("cors_origins", ())),
            rasa_no_key=bool(data.get("rasa_no_key", False)),
            reload=bool(data.get("reload", False)),
        )
