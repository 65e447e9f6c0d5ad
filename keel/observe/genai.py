"""OpenTelemetry's GenAI attribute names (semantic conventions, development status) and the
message shapes of their opt-in content attributes.

The names are written out rather than imported from `opentelemetry.semconv._incubating`
(a private module whose names may move). `gen_ai.system` is the name before v1.37 of the
conventions and `gen_ai.provider.name` the one after; spans carry both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from keel.events.base import to_plain

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"

CHAT = "chat"
INVOKE_AGENT = "invoke_agent"
EXECUTE_TOOL = "execute_tool"
OTHER_PROVIDER = "_OTHER"
"""The conventions' value for a provider they do not name (a scripted model, ...)."""


def _parts(message: Mapping[str, object]) -> list[dict[str, object]]:
    parts: list[dict[str, object]] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    elif isinstance(content, Sequence) and not isinstance(content, str):
        for piece in content:
            if isinstance(piece, Mapping) and isinstance(piece.get("text"), str):
                parts.append({"type": "text", "content": piece["text"]})
    calls = message.get("tool_calls")
    if isinstance(calls, Sequence):
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            function = function if isinstance(function, Mapping) else {}
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": to_plain(function.get("arguments")),
                }
            )
    return parts


def chat_messages(messages: object) -> tuple[str | None, str | None]:
    """(`gen_ai.system_instructions`, `gen_ai.input.messages`) as JSON text, from the chat
    messages Keel recorded in `model_called.metadata.request.messages`."""
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        return None, None
    system: list[dict[str, object]] = []
    converted: list[dict[str, object]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "system":
            system.extend(_parts(message))
        elif role == "tool":
            response = message.get("content")
            part = {"type": "tool_call_response", "id": message.get("tool_call_id")}
            response = to_plain(response)
            converted.append({"role": "tool", "parts": [{**part, "response": response}]})
        else:
            converted.append({"role": role, "parts": _parts(message)})
    return (
        json.dumps(system, default=str) if system else None,
        json.dumps(converted, default=str),
    )


def output_messages(reply: object, finish_reason: str | None) -> str | None:
    """`gen_ai.output.messages` as JSON text, from `model_called.metadata.reply`."""
    if not isinstance(reply, Mapping):
        return None
    message: dict[str, object] = {"role": "assistant", "parts": _parts(reply)}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return json.dumps([message], default=str)
