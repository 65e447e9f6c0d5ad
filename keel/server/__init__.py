"""Keel's HTTP server: the chat API, channels, auth, streaming, admin endpoints and the
web UI (keel/server/ui) over FastAPI.

`create_app(settings, *, engine_factory=None)` builds the app for one agent;
`ServerSettings` says what to serve and how. `keel run` (keel/cli/run_cmd.py) serves it
with uvicorn. Wire formats live here and nowhere else (style rule 16).
"""

from keel.server.app import create_app
from keel.server.runtime import EngineFactory, ServerRuntime
from keel.server.settings import ServerSettings

__all__ = ["EngineFactory", "ServerRuntime", "ServerSettings", "create_app"]
