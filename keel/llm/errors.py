"""Errors raised by models (adapters and the scripted test model)."""

from __future__ import annotations

from keel.errors import RunError


class ModelError(RunError):
    """A model could not produce a reply (provider failure, exhausted script, ...)."""

    code = "keel.model"
