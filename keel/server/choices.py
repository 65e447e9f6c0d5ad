"""Buttons for clients that show only text: numbered choices, and a number read back.

OpenAI clients show the assistant's text and nothing else, so the OpenAI channels write a
turn's buttons into the text as numbered choices (`1. My internet is down`), numbered
across the turn's messages in order (the order of `keel.buttons`). When the next message
on those channels is only such a number (`2`, `2.` or `2)`), it stands for that button of
the last answer (`last_answer_buttons`):
the turn runs with the button's payload as the text and its title as `button_title`
metadata, as if the button had been tapped. A number past the last choice, or a number
when the last answer offered no buttons, is sent as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from keel.events.base import Button
from keel.events.model import BotMessage, BotTurnEnded, UserMessage
from keel.stores.port import EventStore

_NUMBER = re.compile(r"\s*(\d{1,3})\s*[.)]?\s*\Z")


@dataclass(frozen=True, kw_only=True, slots=True)
class ChosenInput:
    """The text a turn runs with, and the tapped button's title when a number chose one."""

    text: str
    button_title: str | None = None


def numbered_text(
    texts: Sequence[str], buttons: Sequence[Sequence[Button]], *, first: int = 1
) -> list[str]:
    """Each message's text with its buttons appended as numbered lines, from `first` on
    (numbers continue from one message to the next)."""
    number = first - 1
    shown: list[str] = []
    for text, row in zip(texts, buttons, strict=True):
        lines = []
        for button in row:
            number += 1
            lines.append(f"{number}. {button.title}")
        shown.append(f"{text}\n\n" + "\n".join(lines) if lines else text)
    return shown


def last_answer_buttons(events: Sequence[object]) -> list[Button]:
    """The buttons of the last answer, in order: the bot messages after the last user
    message, with those of a session turn that ran just before it in the same request
    (the greeting of a first message); a session turn after it is a later answer."""
    since_user: list[Button] = []
    since_end: list[Button] = []  # after the last message turn ended (the log's start counts)
    ended = True
    for event in events:
        if isinstance(event, UserMessage):
            since_user = since_end if ended else []
            since_end, ended = [], False
        elif isinstance(event, BotMessage):
            since_user = [*since_user, *event.buttons]
            since_end = [*since_end, *event.buttons]
        elif isinstance(event, BotTurnEnded) and not ended:
            since_end, ended = [], True
    return since_end if ended and since_end else since_user


async def choose(store: EventStore, key: str, text: str) -> ChosenInput:
    """`text`, or the payload of the button its number names in the conversation `key`."""
    match = _NUMBER.match(text)
    if match is None:
        return ChosenInput(text=text)
    # Only a bare number costs a read of the log.
    buttons = last_answer_buttons([stored.event for stored in await store.read(key)])
    index = int(match.group(1)) - 1
    if not 0 <= index < len(buttons):
        return ChosenInput(text=text)
    button = buttons[index]
    return ChosenInput(text=button.payload, button_title=button.title)
