"""The offered tools keep what changes least first (prompt caches reuse a request's prefix)."""

from __future__ import annotations

from pathlib import Path

from keel.events.base import StackFrame
from keel.events.fold import ConversationState
from keel.loop.offer import CallMode, offered_tools
from keel.project.load import load_project

AIRLINE = Path(__file__).resolve().parents[3] / "examples" / "airline"


def _names(state: ConversationState) -> list[str]:
    definition, _ = load_project(AIRLINE)
    assert definition is not None
    return [o.name for o in offered_tools(definition, state, CallMode())]


def test_gated_tools_and_listen_come_after_what_stays_offered() -> None:
    frame = StackFrame(frame_id="f1", skill_id="airline_service", type="skill")
    before = _names(ConversationState(stack=(frame,)))
    signed_in = ConversationState(stack=(frame,), memory={"project.user_id": "mia_li_3668"})
    after = _names(signed_in)
    assert len(after) > len(before)  # sign-in opens the gated tools
    # The ungated tools and the framework tools that hold while the skill is active come
    # first, unchanged by the sign-in; the newly opened tools come after them.
    stable = before[: before.index("cannot_help") + 1]
    assert "cancel_skill" in stable and "get_user_details" in stable
    assert after[: len(stable)] == stable
    assert "book_reservation" in after[len(stable) :]
    assert after[-1] == "listen"
