"""Errors the engine raises to its callers (not turn failures, which are events)."""

from __future__ import annotations

from keel.errors import RunError


class PauseNotPending(RunError):
    """An approval named a pause point that is not pending (unknown or already resolved)."""

    code = "keel.run.pause_not_pending"

    def __init__(self, conversation_id: str, pause_id: str) -> None:
        self.conversation_id = conversation_id
        self.pause_id = pause_id
        super().__init__(f"conversation {conversation_id!r}: pause {pause_id!r} is not pending")
