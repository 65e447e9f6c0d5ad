"""Errors the engine raises to its callers (not turn failures, which are events)."""

from __future__ import annotations

from keel.errors import RunError


class PauseNotPending(RunError):
    """An approval named a pause point that is not pending (unknown or already resolved)."""

    code = "keel.run.pause_not_pending"

    def __init__(self, conversation_id: str, pause_id: str, detail: str = "is not pending") -> None:
        self.conversation_id = conversation_id
        self.pause_id = pause_id
        super().__init__(f"conversation {conversation_id!r}: pause {pause_id!r} {detail}")


class PauseWithdrawn(PauseNotPending):
    """An approval named a pause point that was withdrawn: the skill frame that asked left
    the stack (cancelled, completed, handed over) or its session ended, so the pause was
    resolved as denied; `reason` says which."""

    code = "keel.run.pause_withdrawn"

    def __init__(self, conversation_id: str, pause_id: str, reason: str) -> None:
        self.reason = reason
        super().__init__(conversation_id, pause_id, f"was withdrawn ({reason})")


class PlanFeedbackRefused(RunError):
    """Feedback named a turn the plan cache cannot learn from (unknown turn, no plan, a bad
    signal, or an agent without `plan_cache`)."""

    code = "keel.run.plan_feedback_refused"

    def __init__(self, conversation_id: str, turn_id: str, reason: str) -> None:
        self.conversation_id = conversation_id
        self.turn_id = turn_id
        self.reason = reason
        super().__init__(f"conversation {conversation_id!r}, turn {turn_id!r}: {reason}")
