"""Turn a `ModelRequest` (OpenAI Chat message shapes) into Messages API parameters.

    system messages        -> the `system` parameter, joined with blank lines, in order
    user                   -> a user turn with one text block
    assistant              -> an assistant turn: its text block, then one `tool_use` block per
                              tool call, `input` being the parsed `arguments` JSON
    tool (one or more)     -> a user turn of `tool_result` blocks {tool_use_id, content}
    tools                  -> [{name, description, input_schema}]

The Messages API wants user and assistant turns to alternate, so consecutive turns of the same
role are merged into one (several tool results become one user turn; a user message that
follows tool results joins their turn). Within a merged user turn the `tool_result` blocks
come first, as the API requires. Empty text is left out (the API rejects empty text blocks),
and a turn left with no blocks is dropped.

Tool-call `arguments` that are not a JSON object (malformed JSON from an earlier reply, or a
bare value) are sent as `input: {}`: the API accepts only objects there, and refusing the whole
request would strand the conversation on a bad earlier reply. The tool result that follows
still tells the model what happened.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from anthropic.types import (
    ContentBlockParam,
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)

from keel.llm.port import AssistantChatMessage, Message, ModelRequest, ToolSchema

Role = Literal["user", "assistant"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AnthropicRequest:
    """The request-specific parameters of `messages.create`."""

    system: str | None
    messages: tuple[MessageParam, ...]
    tools: tuple[ToolParam, ...]


def to_anthropic(request: ModelRequest) -> AnthropicRequest:
    """The Messages API parameters for `request`."""
    system = [m["content"] for m in request.messages if m["role"] == "system" and m["content"]]
    return AnthropicRequest(
        system="\n\n".join(system) if system else None,
        messages=tuple(_turns(request.messages)),
        tools=tuple(tool_param(tool) for tool in request.tools),
    )


def _turns(messages: Sequence[Message]) -> list[MessageParam]:
    turns: list[tuple[Role, list[ContentBlockParam]]] = []
    for message in messages:
        converted = _blocks(message)
        if converted is None or not converted[1]:
            continue
        role, blocks = converted
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return [_message_param(role, blocks) for role, blocks in turns]


def _blocks(message: Message) -> tuple[Role, list[ContentBlockParam]] | None:
    if message["role"] == "system":
        return None
    if message["role"] == "user":
        return "user", _text(message["content"])
    if message["role"] == "tool":
        result: ToolResultBlockParam = {
            "type": "tool_result",
            "tool_use_id": message["tool_call_id"],
            "content": message["content"],
        }
        return "user", [result]
    return "assistant", _assistant_blocks(message)


def _assistant_blocks(message: AssistantChatMessage) -> list[ContentBlockParam]:
    blocks = _text(message["content"])
    for call in message.get("tool_calls", []):
        block: ToolUseBlockParam = {
            "type": "tool_use",
            "id": call["id"],
            "name": call["function"]["name"],
            "input": tool_input(call["function"]["arguments"]),
        }
        blocks.append(block)
    return blocks


def _text(content: str | None) -> list[ContentBlockParam]:
    if not content:
        return []
    block: TextBlockParam = {"type": "text", "text": content}
    return [block]


def _message_param(role: Role, blocks: list[ContentBlockParam]) -> MessageParam:
    if role == "assistant":
        return {"role": "assistant", "content": blocks}
    # tool_result blocks must open a user turn; the sort is stable for the rest.
    ordered = sorted(blocks, key=lambda block: block["type"] != "tool_result")
    return {"role": "user", "content": ordered}


def tool_input(arguments: str) -> dict[str, object]:
    """The `tool_use.input` for raw `arguments` JSON: the object, or `{}` if it is not one."""
    try:
        parsed: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return _plain(parsed) if isinstance(parsed, dict) else {}


def tool_param(tool: ToolSchema) -> ToolParam:
    """A tool definition; the schema gets `"type": "object"` when it does not say."""
    schema: dict[str, object] = {"type": "object", **_plain(tool.parameters)}
    param: ToolParam = {"name": tool.name, "input_schema": schema}
    if tool.description:
        param["description"] = tool.description
    return param


def _plain(mapping: Mapping[str, object]) -> dict[str, object]:
    """A JSON-serialisable copy (read-only mappings and tuples become dicts and lists)."""
    return {str(key): _plain_value(value) for key, value in mapping.items()}


def _plain_value(value: object) -> object:
    if isinstance(value, Mapping):
        return _plain(value)
    if isinstance(value, list | tuple):
        return [_plain_value(item) for item in value]
    return value
