"""Turn a Messages API `Message` into a `ModelResponse`.

Text blocks are joined in order (no separator: they are consecutive pieces of one reply);
`tool_use` blocks become `ToolCall`s whose `arguments` is `json.dumps(input)`. Other block
kinds (thinking, server tools) carry nothing the engine uses and are skipped.

Stop reasons: `end_turn`, `tool_use`, `max_tokens` and `refusal` keep their names;
`stop_sequence` is a normal end (`end_turn`); `model_context_window_exceeded` truncated the
reply like `max_tokens` and is reported as such; a missing reason is `end_turn`; any other
reason (e.g. `pause_turn`) is passed through unchanged.
"""

from __future__ import annotations

import json

from anthropic.types import Message, TextBlock, ToolUseBlock

from keel.llm.port import ModelResponse, ToolCall, Usage

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "stop_sequence": "end_turn",
    "model_context_window_exceeded": "max_tokens",
}


def stop_reason(reason: str | None) -> str:
    """Keel's stop reason for an Anthropic `stop_reason`."""
    if reason is None:
        return "end_turn"
    return _STOP_REASONS.get(reason, reason)


def arguments_text(tool_input: object) -> str:
    """A tool call's `arguments` JSON text for a `tool_use.input` value."""
    return json.dumps(tool_input if tool_input is not None else {}, ensure_ascii=False)


def from_message(message: Message) -> ModelResponse:
    """The `ModelResponse` for a complete (non-streamed) Messages API reply."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            calls.append(
                ToolCall(id=block.id, name=block.name, arguments=arguments_text(block.input))
            )
    text = "".join(texts)
    return ModelResponse(
        text=text or None,
        tool_calls=tuple(calls),
        stop_reason=stop_reason(message.stop_reason),
        usage=Usage(
            input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens
        ),
        model=message.model,
    )
