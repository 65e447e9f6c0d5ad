"""JSON shapes of the OpenAI-compatible endpoints (Chat Completions and Models).

Requests accept the fields OpenAI clients send and ignore the ones Keel has no use for
(temperature, tools, ...): the agent decides how to answer. Answers carry the standard
fields plus a `keel` object (buttons, stop reason, state) that OpenAI clients ignore.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, with_config
from typing_extensions import NotRequired, TypedDict  # noqa: UP035

from keel.server.wire import ButtonOut, ConversationId


@with_config(ConfigDict(extra="allow"))
class ContentPart(TypedDict):
    """A part of a message's content; only `text` parts are read."""

    type: str
    text: NotRequired[str]


@with_config(ConfigDict(extra="allow"))
class ChatMessageIn(TypedDict):
    """One message of the request's history."""

    role: str
    content: NotRequired[str | list[ContentPart] | None]


@with_config(ConfigDict(extra="allow"))
class ChatCompletionRequest(TypedDict):
    """`POST /v1/chat/completions`: only the last user message is used as input."""

    model: str
    messages: Annotated[list[ChatMessageIn], Field(min_length=1)]
    stream: NotRequired[bool | None]
    user: NotRequired[ConversationId | None]
    """The conversation id, when the `X-Keel-Conversation-Id` header is not sent."""


class AssistantMessageOut(TypedDict):
    """The assistant message: the turn's bot messages joined by blank lines."""

    role: Literal["assistant"]
    content: str


class ChoiceOut(TypedDict):
    """The single choice."""

    index: int
    message: AssistantMessageOut
    finish_reason: str
    logprobs: None


class UsageOut(TypedDict):
    """Tokens the turn's model calls used."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class KeelExtra(TypedDict):
    """Keel's additions (ignored by OpenAI clients)."""

    conversation_id: str
    stop_reason: str
    state: str
    buttons: list[ButtonOut]


class ChatCompletionOut(TypedDict):
    """A `chat.completion` object."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChoiceOut]
    usage: UsageOut
    keel: KeelExtra


class ModelOut(TypedDict):
    """A `model` object: the served agent."""

    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelListOut(TypedDict):
    """`GET /v1/models`."""

    object: Literal["list"]
    data: list[ModelOut]
