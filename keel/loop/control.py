"""Control messages: text a channel or a client sends in the user's place (spec §7.1).

`/session_start`, `/session_end` and `/restart` are commands, and a `set:` payload is a
button tap: none of them is something the user said, so the model never reads one as user
text. What the user did say by tapping is the button's title, when the channel sent it.
The driver (`keel.loop.driver.control_turn`) runs `/session_end` and `/restart` without a
model call; after a `/restart` the model reads nothing said before it
(`keel.loop.model_request.history`).
"""

from __future__ import annotations

from typing import Final

from keel.events.model import UserMessage
from keel.memory.payload import PREFIX as SET_PREFIX

SESSION_START: Final = "/session_start"
SESSION_END: Final = "/session_end"
RESTART: Final = "/restart"
COMMANDS: Final = frozenset({SESSION_START, SESSION_END, RESTART})


def is_control_message(text: str) -> bool:
    """The text is a control command or a `set:` payload, not words of the user."""
    return text.strip() in COMMANDS or text.startswith(SET_PREFIX)


def said_by_user(event: UserMessage) -> str | None:
    """What the model reads of a user message: its text; for a tap, the button's title
    (None without one); None for a control command."""
    if event.is_button_payload or event.text.startswith(SET_PREFIX):
        title = event.button_title
        return title if title is not None and title.strip() else None
    return None if is_control_message(event.text) else event.text
