"""JSON shapes of the chat API, as TypedDicts (validated by FastAPI, listed in OpenAPI).

Requests are validated strictly (unknown fields are refused with 422); answers are built
by `keel.server.views` from the event log. The OpenAI-compatible shapes live in
`keel.server.openai_wire`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, with_config
from pydantic_core import PydanticCustomError

# pydantic needs typing_extensions.TypedDict on Python < 3.12 (it reads `__orig_bases__`).
from typing_extensions import NotRequired, TypedDict  # noqa: UP035

from keel.events.base import NotJsonValue, freeze_mapping

MAX_TEXT_CHARS = 16_000
"""Longest user message accepted; longer texts are refused with 422."""

METADATA_MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in channel metadata (deeper is 422);
the metadata object itself is the first level."""

CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""Conversation ids clients may choose: 1 to 128 characters, no slash, no spaces."""

ConversationId = Annotated[str, StringConstraints(pattern=CONVERSATION_ID_PATTERN)]
UserText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]
JsonObject = dict[str, object]


def storable_metadata(value: JsonObject) -> JsonObject:
    """Refuse metadata the log cannot hold: non-finite numbers, strings or keys that are
    not valid UTF-8, more than `METADATA_MAX_DEPTH` levels (a 422 naming the part)."""
    try:
        freeze_mapping(value, max_depth=METADATA_MAX_DEPTH)  # type: ignore[arg-type]
    except NotJsonValue as exc:
        raise PydanticCustomError("json_not_storable", "{reason}", {"reason": str(exc)}) from None
    return value


Metadata = Annotated[JsonObject, AfterValidator(storable_metadata)]
"""Channel metadata: a JSON object every store can write (checked by `storable_metadata`)."""

StopReasonOut = Literal["end_turn", "paused", "budget_exhausted", "cancelled", "error"]
StateOut = Literal["idle", "running", "paused", "ended", "failed"]

# --- requests -------------------------------------------------------------------------


@with_config(ConfigDict(extra="forbid"))
class MessageRequest(TypedDict):
    """`POST /v1/conversations/{id}/messages`: one user message."""

    text: UserText
    metadata: NotRequired[Metadata]
    """Channel metadata; used when the message starts a session (seeded memory fields)."""


@with_config(ConfigDict(extra="forbid"))
class ApprovalRequest(TypedDict):
    """`POST /v1/conversations/{id}/approvals/{pause_id}`: approve or deny a pause point."""

    approved: Annotated[bool, Field(strict=True)]


@with_config(ConfigDict(extra="forbid"))
class RestWebhookRequest(TypedDict):
    """Rasa's REST channel input: `{sender, message, metadata?, input_channel?}`."""

    sender: ConversationId
    message: UserText
    metadata: NotRequired[Metadata | None]
    input_channel: NotRequired[Annotated[str, StringConstraints(max_length=64)] | None]
    """The channel the message came through (Rasa's default: `rest`); handed on as the
    `input_channel` entry of the message's metadata."""


# --- answers --------------------------------------------------------------------------


class ButtonOut(TypedDict):
    """A button: the title shown and the payload to send back as the next message."""

    title: str
    payload: str


class BotMessageOut(TypedDict):
    """One bot message."""

    seq: int
    """Its sequence number in the conversation's log."""
    text: str
    buttons: list[ButtonOut]
    utter_action: str | None


class PendingOut(TypedDict):
    """A pause point waiting for approval."""

    pause_id: str
    tool: str
    ask: str
    """The question put to the user."""
    arguments: JsonObject


class MessageReply(TypedDict):
    """The answer to a message or an approval: what this request added to the log."""

    conversation_id: str
    messages: list[BotMessageOut]
    stop_reason: StopReasonOut
    state: StateOut
    pending_confirmation: PendingOut | None
    last_seq: int


class FrameOut(TypedDict):
    """One frame of the dialogue stack (bottom first)."""

    frame_id: str
    skill_id: str
    type: str
    block_id: str | None
    step_id: str | None


class ConversationView(TypedDict):
    """`GET /v1/conversations/{id}`: the folded state, with pii memory masked."""

    conversation_id: str
    state: StateOut
    running: bool
    """A turn of this conversation is running in the process that answered."""
    active_skill: str | None
    stack: list[FrameOut]
    memory: JsonObject
    pending_confirmation: PendingOut | None
    last_stop_reason: StopReasonOut | None
    turn_count: int
    last_seq: int


class LoggedEvent(TypedDict):
    """One event of the log: its sequence number and its encoded form."""

    seq: int
    event: JsonObject


class EventsReply(TypedDict):
    """`GET /v1/conversations/{id}/events`."""

    conversation_id: str
    events: list[LoggedEvent]
    last_seq: int


class CancelReply(TypedDict):
    """`POST /v1/conversations/{id}/cancel`."""

    conversation_id: str
    cancelled: bool
    stop_reason: StopReasonOut
    state: StateOut


class AdminConversation(TypedDict):
    """One conversation in the admin listing."""

    owner: str | None
    """The name of the API key that created it (None for logs written outside the server)."""
    conversation_id: str
    last_seq: int
    updated_at: float


class AdminConversationsReply(TypedDict):
    """`GET /v1/admin/conversations`."""

    conversations: list[AdminConversation]


class StateAtReply(TypedDict):
    """`GET /v1/admin/conversations/{owner}/{id}/state`: the fold of the log up to `seq`."""

    owner: str | None
    conversation_id: str
    seq: int
    """The last event folded (the `seq` asked for, else the log's last)."""
    last_seq: int
    """The log's last seq when answered."""
    status: StateOut
    active_skill: str | None
    stack: list[FrameOut]
    memory: JsonObject
    """pii fields masked as `[set]`."""
    pending_confirmation: PendingOut | None
    last_stop_reason: StopReasonOut | None
    turn_count: int


class RestMessageOut(TypedDict):
    """Rasa's REST channel output: one bot message for `recipient_id`."""

    recipient_id: str
    text: str
    buttons: NotRequired[list[ButtonOut]]


class HealthReply(TypedDict):
    """`GET /health`."""

    status: Literal["ok"]
    agent: str


class ErrorDetail(TypedDict):
    """One validation problem."""

    loc: list[str]
    message: str


class ErrorBody(TypedDict):
    """The `error` object of every 4xx/5xx answer."""

    code: str
    message: str
    type: str
    details: NotRequired[list[ErrorDetail]]


class ErrorReply(TypedDict):
    """Every error answer: `{"error": {...}}`."""

    error: ErrorBody
