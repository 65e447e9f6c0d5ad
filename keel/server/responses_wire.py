"""JSON shapes of `POST /v1/responses` (OpenAI's Responses API), as Keel answers it.

The request accepts every field OpenAI clients send (the Agents SDK sends `instructions`,
`tools`, `include`, `store`, ...) and reads only `input`, `conversation`,
`previous_response_id` and `stream`: the agent decides how to answer and keeps the
history itself. The answer is a `response` object with one assistant `message` item, plus
a `keel` object (buttons, stop reason, state) that OpenAI clients ignore.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict  # noqa: UP035

from keel.server.openai_wire import KeelExtra


@with_config(ConfigDict(extra="allow"))
class InputPart(TypedDict):
    """A part of an input message's content; `input_text` (and `text`) parts are read."""

    type: str
    text: NotRequired[str]


@with_config(ConfigDict(extra="allow"))
class InputItem(TypedDict):
    """An item of `input`: a message (`role`, `content`) or any other item (ignored)."""

    type: NotRequired[str]
    role: NotRequired[str]
    content: NotRequired[str | list[InputPart] | None]


@with_config(ConfigDict(extra="allow"))
class ConversationRef(TypedDict):
    """`conversation` as an object."""

    id: str


@with_config(ConfigDict(extra="allow"))
class ResponseRequest(TypedDict):
    """`POST /v1/responses`: the last user message of `input` is the turn's input."""

    model: NotRequired[str | None]
    input: str | list[InputItem]
    conversation: NotRequired[str | ConversationRef | None]
    """The conversation to continue (any id the caller chooses, created on first use)."""
    previous_response_id: NotRequired[str | None]
    """Continue the conversation of that response (not with `conversation`)."""
    stream: NotRequired[bool | None]
    user: NotRequired[str | None]


class OutputText(TypedDict):
    """The text of the assistant message."""

    type: Literal["output_text"]
    text: str
    annotations: list[object]
    logprobs: list[object]


class OutputMessage(TypedDict):
    """The assistant message: the turn's bot messages joined by blank lines."""

    type: Literal["message"]
    id: str
    status: Literal["completed", "in_progress"]
    role: Literal["assistant"]
    content: list[OutputText]


class InputTokensDetails(TypedDict):
    """Of the input tokens, those read from a provider's prompt cache."""

    cached_tokens: int


class OutputTokensDetails(TypedDict):
    """Reasoning tokens (Keel does not count them apart: 0)."""

    reasoning_tokens: int


class ResponseUsage(TypedDict):
    """Tokens the turn's model calls used."""

    input_tokens: int
    input_tokens_details: InputTokensDetails
    output_tokens: int
    output_tokens_details: OutputTokensDetails
    total_tokens: int


class ConversationOut(TypedDict):
    """The conversation the response belongs to."""

    id: str


class ResponseErrorOut(TypedDict):
    """Why a streamed response failed."""

    code: str
    message: str


class ResponseOut(TypedDict):
    """A `response` object."""

    id: str
    """`resp_<hex of the conversation id>_<unique>`: a later `previous_response_id` names
    the conversation by itself, with nothing stored and across workers."""
    object: Literal["response"]
    created_at: int
    completed_at: int | None
    status: Literal["completed", "in_progress", "failed"]
    model: str
    output: list[OutputMessage]
    conversation: ConversationOut
    previous_response_id: str | None
    error: ResponseErrorOut | None
    incomplete_details: None
    instructions: None
    metadata: dict[str, str]
    parallel_tool_calls: bool
    tool_choice: Literal["auto"]
    tools: list[object]
    temperature: None
    top_p: None
    text: dict[str, object]
    truncation: Literal["disabled"]
    usage: ResponseUsage | None
    keel: NotRequired[KeelExtra]
