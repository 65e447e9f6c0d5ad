"""The app factory uvicorn imports in each worker: `keel.server.asgi:app_from_env`.

`keel run` puts the settings in `KEEL_SERVER_SETTINGS` (JSON, key digests only) and
starts uvicorn with `factory=True`, so every worker process builds the same app. Tracing
is configured by the standard `OTEL_*` variables each worker inherits.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from keel.observe.tracing import TracingConfig
from keel.server.app import create_app
from keel.server.master_watch import watch_master
from keel.server.settings import SETTINGS_ENV, ServerSettings


def app_from_env() -> FastAPI:
    """Build the app from `KEEL_SERVER_SETTINGS` (a worker of several also starts watching
    its master, `keel.server.master_watch`)."""
    text = os.environ.get(SETTINGS_ENV)
    if not text:
        raise RuntimeError(f"{SETTINGS_ENV} is not set; start the server with `keel run`")
    watch_master()
    # The standard OpenTelemetry variables turn span export on (docs/observability.md).
    return create_app(ServerSettings.from_json(text), tracing=TracingConfig.from_env(os.environ))
