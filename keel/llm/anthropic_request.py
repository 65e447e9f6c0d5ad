"""`ModelRequest` -> Anthropic Messages API parameters (`keel.llm.anthropic` sends them).

Requests: a `ModelRequest` (OpenAI Chat message shapes) becomes Messages API parameters.

    system messages that   -> the `system` parameter, joined with blank lines, in order
    open the request          (split into two text blocks at the prompt's stable part when
                              the request says where it ends: see Prompt caching below)
    a later system message -> a text block of a user turn (the prompt's volatile part, which
                              closes the request after the history)
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

Prompt caching: a request whose `cache` (`keel.llm.port.PromptCache`) says anything gets
`cache_control: {"type": "ephemeral"}` breakpoints (at most three of the four the API allows):
on the last tool (the API caches tools, then system, then messages, in that order) and, when
`stable_system_chars` is known, on a first system text block holding exactly the stable
part (the rest follows in a second block, so the text the model reads is unchanged); and
when the request closes with its volatile system text after the history, on the block just
before that text, so the next request reuses the conversation so far. Prefixes shorter
than the model's minimum (1,024 tokens on most models) are not cached
by the API, silently. Usage: the API reports `input_tokens` without the cached ones; the
adapter reports `input_tokens + cache_read_input_tokens + cache_creation_input_tokens` as
Keel's `input_tokens` (every prompt token, as with OpenAI), and the two cache counts as
`cached_input_tokens` and `cache_write_tokens`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from anthropic.types import (
    CacheControlEphemeralParam,
    ContentBlockParam,
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
)

from keel.llm.port import AssistantChatMessage, Message, ModelRequest, PromptCache, ToolSchema

Role = Literal["user", "assistant"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AnthropicRequest:
    """The request-specific parameters of `messages.create`."""

    system: str | tuple[TextBlockParam, ...] | None
    """Text, or text blocks when a cache breakpoint splits it."""
    messages: tuple[MessageParam, ...]
    tools: tuple[ToolParam, ...]


EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}
"""The cache breakpoint marker (the API's default lifetime, five minutes)."""


def to_anthropic(request: ModelRequest) -> AnthropicRequest:
    """The Messages API parameters for `request`, with cache breakpoints when it asks."""
    caching = request.cache != PromptCache()
    tools = [tool_param(tool) for tool in request.tools]
    if caching and tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    turns = _turns(request.messages)
    if caching:
        _mark_history(turns, request.messages)
    return AnthropicRequest(
        system=_system(request, caching=caching),
        messages=tuple(turns),
        tools=tuple(tools),
    )


def _mark_history(turns: list[MessageParam], messages: Sequence[Message]) -> None:
    """A breakpoint on the last block before the request's closing system text (the
    prompt's volatile part, which `keel.loop.model_request` puts after the history), so the
    next request reuses the whole conversation so far. Nothing when there is no such text."""
    last = messages[-1] if len(messages) > _leading_system(messages) else None
    if last is None or last["role"] != "system" or not last["content"] or not turns:
        return
    blocks: list[Any] = list(turns[-1]["content"])
    closing = next(
        (i for i in range(len(blocks) - 1, -1, -1) if blocks[i].get("text") == last["content"]),
        None,
    )
    if closing is None:
        return
    if closing > 0:
        blocks[closing - 1] = {**blocks[closing - 1], "cache_control": EPHEMERAL}
        turns[-1] = cast(MessageParam, {**turns[-1], "content": blocks})
    elif len(turns) > 1:
        before: list[Any] = list(turns[-2]["content"])
        before[-1] = {**before[-1], "cache_control": EPHEMERAL}
        turns[-2] = cast(MessageParam, {**turns[-2], "content": before})


def _leading_system(messages: Sequence[Message]) -> int:
    """How many messages open the request as system messages (the `system` parameter)."""
    count = 0
    while count < len(messages) and messages[count]["role"] == "system":
        count += 1
    return count


def _system(request: ModelRequest, *, caching: bool) -> str | tuple[TextBlockParam, ...] | None:
    opening = request.messages[: _leading_system(request.messages)]
    texts = [m["content"] for m in opening if m["content"]]
    if not texts:
        return None
    text = "\n\n".join(texts)
    stable = request.cache.stable_system_chars
    opens = bool(request.messages) and request.messages[0]["role"] == "system"
    if not (caching and opens and 0 < stable <= len(text)):
        return text
    head: TextBlockParam = {"type": "text", "text": text[:stable], "cache_control": EPHEMERAL}
    if stable == len(text):
        return (head,)
    # The rest starts with the blank line that joined the parts: the text read is unchanged.
    return (head, {"type": "text", "text": text[stable:]})


def _turns(messages: Sequence[Message]) -> list[MessageParam]:
    turns: list[tuple[Role, list[ContentBlockParam]]] = []
    for message in messages[_leading_system(messages) :]:
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
        # A system message after the conversation (the prompt's volatile part) can only be
        # read in a user turn: the API takes system text before the messages alone.
        return "user", _text(message["content"])
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
