"""The app factory uvicorn imports in each worker: `keel.server.asgi:app_from_env`.

`keel run` puts the settings in `KEEL_SERVER_SETTINGS` (JSON, key digests only) and
starts uvicorn with `factory=True`, so every worker process builds the same app.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from keel.server.app import create_app
from keel.server.settings import SETTINGS_ENV, ServerSettings


def app_from_env() -> FastAPI:
    """Build the app from `KEEL_SERVER_SETTINGS`."""
    text = os.environ.get(SETTINGS_ENV)
    if not text:
        raise RuntimeError(f"{SETTINGS_ENV} is not set; start the server with `keel run`")
    return create_app(ServerSettings.from_json(text))
