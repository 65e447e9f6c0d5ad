"""Voice mode: which channel a conversation is on, and what changes in voice (spec §7.6, §9.4).

The channel that opens a session says where the replies go: a voice channel (the Twilio
Media Streams call, the browser voice page) sends `channel: voice` in the session-start
metadata, so the choice is in the log (`memory_set session_started_metadata`) and lasts
for the session; any other channel, or none, is `text`. In voice:

* the prompt's channel section uses `prompts.voice_rules` (or Keel's voice wording) and
  the acknowledgement section is on by default (`keel.loop.prompt_sections`);
* the text the model writes beside its first tool call of a turn, while
  acknowledgements are on, is a filler: a bot message with `response_source: filler`
  and `agent_message_type: filler_message`, spoken while the tool runs (spec §7.6);
* bot messages are spoken in their spoken form (`keel.loop.spoken`).

Pure: reads the folded state and the project's prompts only.
"""

from __future__ import annotations

from typing import Final

from keel.events.base import freeze_mapping
from keel.events.fold import ConversationState
from keel.events.model import BotMessage
from keel.loop.prompt_sections import Channel, ack_enabled
from keel.project.prompts import Prompts

CHANNEL_KEY: Final = "channel"
"""The session-start metadata key naming the channel kind (`voice` or `text`)."""
VOICE: Final = "voice"
FILLER_TYPE: Final = "filler_message"
"""`agent_message_type` of a filler (Mantle's tracker name)."""


def channel_of(state: ConversationState) -> Channel:
    """`voice` when the current session was opened by a voice channel, else `text`."""
    return "voice" if state.session_metadata.get(CHANNEL_KEY) == VOICE else "text"


def beside_tools(
    state: ConversationState, prompts: Prompts, text: str, *, first_call: bool
) -> BotMessage:
    """The bot message for text the model wrote beside tool calls: a filler on the first
    model call of a turn when acknowledgements are on for the channel, else model text."""
    if first_call and ack_enabled(prompts, channel_of(state)):
        return BotMessage(
            text=text,
            response_source="filler",
            metadata=freeze_mapping({"agent_message_type": FILLER_TYPE}),
        )
    return BotMessage(text=text, response_source="llm")


def is_filler(message: BotMessage) -> bool:
    """Whether `message` is a filler (said while the turn's tools run)."""
    return message.response_source == "filler"
