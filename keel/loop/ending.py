"""How a turn ends: the stop reason, the conversation state, and the stage timings.

| outcome of the loop | stop reason | conversation state |
| --- | --- | --- |
| wait for the user | `end_turn` | `idle` |
| a confirmation is pending | `paused` | `paused` |
| hangup | `end_turn` | `ended` |
| budget or repeated-call breaker | `budget_exhausted` (with a bundled warning) | `idle` |
| cancelled / error (see `keel.loop.driver.guarded`) | `cancelled` / `error` | `idle` / `failed` |
"""

from __future__ import annotations

from keel.events.base import EMPTY, ConversationStatus, StopReason
from keel.events.model import BotTurnEnded, ConversationStateChanged, StagesTimed, TurnEnded
from keel.loop.turn import Next, TurnContext

_STOP: dict[Next, StopReason] = {
    Next.WAIT: "end_turn",
    Next.ENDED: "end_turn",
    Next.PAUSED: "paused",
    Next.EXHAUSTED: "budget_exhausted",
}


def budget_spent(t: TurnContext) -> bool:
    """The turn made all the model round trips its skill's (or the agent's) `max_turns`
    allows; the turn then ends as exhausted."""
    if t.model_calls < t.budget():
        return False
    t.stop_detail = "budget"
    return True


async def finish_turn(t: TurnContext, outcome: Next) -> None:
    """End the turn after the loop said what happens next."""
    if outcome is Next.EXHAUSTED:
        repeated = t.stop_detail == "repeated_tool_call"
        await t.utter("utter_repeated_tool_call" if repeated else "utter_budget_exhausted")
    if outcome is Next.ENDED:
        await end_turn(t, "end_turn", "ended")
    elif t.state.pending_confirmation is not None:
        await end_turn(t, "paused", "paused")
    else:
        await end_turn(t, _STOP.get(outcome, "end_turn"), "idle")


async def end_turn(t: TurnContext, stop_reason: StopReason, status: ConversationStatus) -> None:
    """Record the stage timings (one `stages_timed`), the stop reason and the new
    conversation state."""
    meta = {"detail": t.stop_detail} if t.stop_detail else EMPTY
    t.stage_ms["persist"] = t.recorder.persist_ms
    await t.emit(
        StagesTimed(durations_ms=dict(sorted(t.stage_ms.items()))),
        TurnEnded(turn_id=t.turn_id, stop_reason=stop_reason, metadata=meta),
        ConversationStateChanged(state=status),
        BotTurnEnded(),
    )
