"""The model port: request and response values and the `Model` protocol.

Messages are OpenAI Chat Completions dicts (typed below): `system`, `user`, `assistant`
(text and/or `tool_calls`, whose `arguments` is JSON text) and `tool` (a tool result for
one `tool_call_id`). The engine builds a `ModelRequest`, a `Model` answers with a
`ModelResponse`; the engine never sees provider-specific shapes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, NotRequired, Protocol, TypeAlias, TypedDict


class SystemChatMessage(TypedDict):
    """`{"role": "system", "content": ...}`."""

    role: Literal["system"]
    content: str


class UserChatMessage(TypedDict):
    """`{"role": "user", "content": ...}`."""

    role: Literal["user"]
    content: str


class ChatFunction(TypedDict):
    """The `function` part of a tool call: the tool name and its arguments as JSON text."""

    name: str
    arguments: str


class ChatToolCall(TypedDict):
    """`{"id": ..., "type": "function", "function": {"name": ..., "arguments": "<json>"}}`."""

    id: str
    type: Literal["function"]
    function: ChatFunction


class AssistantChatMessage(TypedDict):
    """`{"role": "assistant", "content": text or None, "tool_calls": [...]}`."""

    role: Literal["assistant"]
    content: str | None
    tool_calls: NotRequired[list[ChatToolCall]]


class ToolChatMessage(TypedDict):
    """`{"role": "tool", "tool_call_id": ..., "content": ...}`: one tool result."""

    role: Literal["tool"]
    tool_call_id: str
    content: str


Message: TypeAlias = SystemChatMessage | UserChatMessage | AssistantChatMessage | ToolChatMessage
"""Any chat message of a model request."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSchema:
    """A tool as offered to the model: its name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: Mapping[str, object]


@dataclass(frozen=True, kw_only=True, slots=True)
class PromptCache:
    """What repeats from request to request, for providers that cache prompts by prefix.

    Provider-neutral: each adapter maps it onto its provider's mechanism (Anthropic marks
    `cache_control` breakpoints, OpenAI sends `prompt_cache_key`); a model that caches
    nothing ignores it. It never changes what the model reads.
    """

    stable_system_chars: int = 0
    """The first message is a system message whose first this many characters are the same
    on every call of the conversation while its skill and offered tools stay the same (the
    prompt's stable sections); the rest of it changes (step, memory, clock). 0: not known."""
    key: str | None = None
    """Names the series of requests that share prefixes (one conversation), for providers
    that route requests to their caches by a key."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """One model round trip: the conversation so far and the tools on offer."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    tier: str = "default"
    """Which model group to use (`router`, `default`, `reasoning`, ...)."""
    cache: PromptCache = field(default_factory=PromptCache)
    """Prompt-cache hints; the default says nothing about the prefix."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCall:
    """A tool call the model proposed. `arguments` is the raw JSON text the model sent."""

    id: str
    name: str
    arguments: str

    def to_message_part(self) -> ChatToolCall:
        """This call in the chat wire shape, for the assistant message of the history."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """Tokens one round trip consumed.

    `input_tokens` counts every prompt token, cached ones included, with every provider
    (Anthropic reports the cached ones apart: the adapter adds them back);
    `cached_input_tokens` and `cache_write_tokens` say how many of them were read from, and
    written to, the provider's prompt cache (they are priced apart: `keel.llm.usage`).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Prompt tokens read from the provider's cache (OpenAI `cached_tokens`, Anthropic
    `cache_read_input_tokens`)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache (Anthropic
    `cache_creation_input_tokens`; OpenAI reports none)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelResponse:
    """What the model answered: text and/or tool calls, in the order it sent them."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str = "end_turn"
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    """The concrete model id that answered."""

    def to_message(self) -> AssistantChatMessage:
        """This response as the assistant message to append to the history."""
        return assistant_message(self.text, self.tool_calls)


@dataclass(frozen=True, kw_only=True, slots=True)
class TextDelta:
    """A piece of reply text, as it arrives."""

    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call: `index` identifies the call within the reply; `id` and `name`
    arrive with the first piece, `arguments` is appended piece by piece."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class StreamDone:
    """The end of a streamed reply, with the whole response assembled."""

    response: ModelResponse


StreamEvent: TypeAlias = TextDelta | ToolCallDelta | StreamDone
"""What `StreamingModel.stream` yields; the last item is always `StreamDone`."""


class Model(Protocol):
    """Anything that can answer a `ModelRequest` (provider adapters, the scripted model)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request; raises `keel.llm.ModelError` when no answer can be given."""
        ...


def system_message(content: str) -> SystemChatMessage:
    """A system message."""
    return {"role": "system", "content": content}


def user_message(content: str) -> UserChatMessage:
    """A user message."""
    return {"role": "user", "content": content}


def assistant_message(
    content: str | None, tool_calls: tuple[ToolCall, ...] = ()
) -> AssistantChatMessage:
    """An assistant message; `tool_calls` is present only when there are some."""
    message: AssistantChatMessage = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [call.to_message_part() for call in tool_calls]
    return message


def tool_message(tool_call_id: str, content: str) -> ToolChatMessage:
    """The result of one tool call."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


class StreamingModel(Model, Protocol):
    """A model that can also stream its reply."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield deltas as they arrive, then `StreamDone` with the assembled response."""
        ...
