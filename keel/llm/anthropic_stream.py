"""Assemble a streamed Messages API reply into Keel stream events and a `ModelResponse`.

The wire sequence is `message_start`, then per content block `content_block_start`,
`content_block_delta`s and `content_block_stop`, then `message_delta` (stop reason, output
usage) and `message_stop`. `StreamAssembler.feed` turns each event into zero or more
`TextDelta` / `ToolCallDelta` values:

    text_delta                       -> TextDelta(text)
    content_block_start (tool_use)   -> ToolCallDelta(index, id, name)
    input_json_delta                 -> ToolCallDelta(index, arguments=partial_json)

`ToolCallDelta.index` counts tool calls within the reply (0, 1, ...), as in the OpenAI
adapter, not Anthropic's content-block index (which also counts text blocks).
`StreamAssembler.response` gives the assembled reply; a tool call whose input arrived in no
delta keeps the JSON of the start block's `input` (`{}` for an empty one).
"""

from __future__ import annotations

from dataclasses import dataclass

from anthropic.types import (
    InputJSONDelta,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    ToolUseBlock,
)
from anthropic.types import TextDelta as WireTextDelta

from keel.llm.anthropic_response import arguments_text, stop_reason
from keel.llm.port import ModelResponse, TextDelta, ToolCall, ToolCallDelta, Usage


@dataclass(kw_only=True, slots=True)
class _PendingCall:
    index: int
    id: str
    name: str
    start_input: object
    arguments: str = ""


class StreamAssembler:
    """Running state of one streamed reply."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PendingCall] = {}  # by content-block index
        self._model = ""
        self._input_tokens = 0
        self._output_tokens = 0
        self._stop_reason: str | None = None
        self.finished = False
        """Whether `message_stop` has arrived."""

    def feed(self, event: RawMessageStreamEvent) -> list[TextDelta | ToolCallDelta]:
        """The deltas `event` carries (often none)."""
        if isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        if isinstance(event, RawContentBlockStartEvent):
            return self._block_start(event)
        if isinstance(event, RawMessageStartEvent):
            self._model = event.message.model
            self._input_tokens = event.message.usage.input_tokens
            self._output_tokens = event.message.usage.output_tokens
        elif isinstance(event, RawMessageDeltaEvent):
            self._stop_reason = event.delta.stop_reason
            self._output_tokens = event.usage.output_tokens
            if event.usage.input_tokens is not None:
                self._input_tokens = event.usage.input_tokens
        elif isinstance(event, RawMessageStopEvent):
            self.finished = True
        return []

    def _block_start(self, event: RawContentBlockStartEvent) -> list[TextDelta | ToolCallDelta]:
        block = event.content_block
        if not isinstance(block, ToolUseBlock):
            return []
        call = _PendingCall(
            index=len(self._calls), id=block.id, name=block.name, start_input=block.input
        )
        self._calls[event.index] = call
        return [ToolCallDelta(index=call.index, id=call.id, name=call.name)]

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[TextDelta | ToolCallDelta]:
        delta = event.delta
        if isinstance(delta, WireTextDelta):
            self._text.append(delta.text)
            return [TextDelta(text=delta.text)] if delta.text else []
        call = self._calls.get(event.index)
        if isinstance(delta, InputJSONDelta) and call is not None:
            call.arguments += delta.partial_json
            if delta.partial_json:
                return [ToolCallDelta(index=call.index, arguments=delta.partial_json)]
        return []

    def response(self) -> ModelResponse:
        """The reply assembled from the events fed so far."""
        calls = tuple(
            ToolCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments or arguments_text(call.start_input),
            )
            for call in self._calls.values()
        )
        text = "".join(self._text)
        return ModelResponse(
            text=text or None,
            tool_calls=calls,
            stop_reason=stop_reason(self._stop_reason),
            usage=Usage(input_tokens=self._input_tokens, output_tokens=self._output_tokens),
            model=self._model,
        )
