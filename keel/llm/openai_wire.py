"""Chat Completions wire shapes to and from Keel's model port values.

Requests: messages are already in the Chat Completions shape and pass through unchanged;
each `ToolSchema` becomes `{"type": "function", "function": {name, description,
parameters}}`. Replies: the first choice becomes a `ModelResponse`.

Lenient on purpose, because OpenAI-compatible servers (llama.cpp, vLLM, Ollama) differ:
a missing tool call id becomes `call_<n>` (`n` is the call's position in the reply), a
missing `usage` becomes zero tokens, a missing `model` becomes the configured model id,
and `finish_reason: "stop"` next to tool calls (some servers send it) counts as
`tool_use`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallUnion,
)

from keel.llm.openai_errors import malformed_response
from keel.llm.port import Message, ModelResponse, ToolCall, ToolSchema, Usage

STOP_REASONS: Mapping[str, str] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
"""Chat Completions `finish_reason` -> Keel `stop_reason`; other values pass through as-is."""


def messages_param(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """The request's messages, unchanged (Keel's message dicts are the wire shape)."""
    return cast("list[ChatCompletionMessageParam]", [dict(message) for message in messages])


def tools_param(tools: Sequence[ToolSchema]) -> list[ChatCompletionFunctionToolParam]:
    """Keel tool schemas as Chat Completions `function` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": cast("dict[str, object]", plain_json(tool.parameters)),
            },
        }
        for tool in tools
    ]


def plain_json(value: object) -> object:
    """`value` with every mapping a dict and every tuple a list, so `json` can encode it
    (tool schemas may be read-only `MappingProxyType`s)."""
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(item) for item in value]
    return value


def stop_reason(finish_reason: str | None, *, has_tool_calls: bool) -> str:
    """The Keel stop reason for a `finish_reason` (None when a server leaves it out)."""
    mapped = STOP_REASONS.get(finish_reason or "stop", finish_reason or "end_turn")
    if has_tool_calls and mapped == "end_turn":
        return "tool_use"
    return mapped


def call_id(raw: str | None, position: int) -> str:
    """The server's tool call id, or the deterministic `call_<position>` when it sent none."""
    return raw if raw else f"call_{position}"


def usage_of(usage: CompletionUsage | None) -> Usage:
    """Token counts; zero for servers that report none."""
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
    )


def response_of(completion: object, *, model: str) -> ModelResponse:
    """The first choice of a `chat.completion` as a `ModelResponse`.

    Raises `ProviderUnavailable` when the payload is not a completion with a choice (a
    server answering HTML, or an empty `choices` list)."""
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise malformed_response(
            f"expected a chat.completion with choices, got {completion!r:.200}"
        )
    choice = completion.choices[0]
    message = choice.message
    if message is None:
        raise malformed_response("the first choice has no message")
    calls = tuple(_tool_call(call, n) for n, call in enumerate(message.tool_calls or ()))
    text = message.content or None
    refused = text is None and bool(message.refusal)
    return ModelResponse(
        text=message.refusal if refused else text,
        tool_calls=calls,
        stop_reason="refusal"
        if refused
        else stop_reason(choice.finish_reason, has_tool_calls=bool(calls)),
        usage=usage_of(completion.usage),
        model=completion.model or model,
    )


def _tool_call(call: ChatCompletionMessageToolCallUnion, position: int) -> ToolCall:
    if isinstance(call, ChatCompletionMessageFunctionToolCall):
        return ToolCall(
            id=call_id(call.id, position),
            name=call.function.name or "",
            arguments=call.function.arguments or "",
        )
    # A `custom` (free-text) tool call: Keel only offers function tools, but keep it visible.
    return ToolCall(
        id=call_id(call.id, position), name=call.custom.name, arguments=call.custom.input
    )
