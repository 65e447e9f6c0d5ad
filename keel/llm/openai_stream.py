"""Assembly of streamed `chat.completion.chunk`s into Keel stream events and a response.

Each chunk's first choice gives a `TextDelta` per non-empty `content` piece and a
`ToolCallDelta` per `tool_calls` entry: the first piece of a call carries its `index`, `id`
and `name`, later pieces only `arguments`. The usage-only chunk OpenAI sends last when
asked with `stream_options: {"include_usage": true}` (it has no choices) sets the usage.

Server quirks handled here: a call without an `id` gets `call_<index>`; an entry without an
`index` starts a new call when it names one and continues the latest call otherwise; ids
and names repeated on every piece (some proxies do that) are not repeated in the deltas.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

from keel.llm.openai_wire import call_id, stop_reason, usage_of
from keel.llm.port import (
    ModelResponse,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)


@dataclass(slots=True)
class _PartialCall:
    """A tool call being assembled (mutable working state, never leaves this module)."""

    id: str
    name: str
    arguments: str = ""


class StreamAssembler:
    """Feed it chunks in order; it returns the events to yield, then `response()`."""

    def __init__(self, *, model: str) -> None:
        self._model = model
        self._served_model = ""
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._finish_reason: str | None = None
        self._usage = Usage()

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        """The events one chunk carries (possibly none)."""
        if chunk.model and not self._served_model:
            self._served_model = chunk.model
        if chunk.usage is not None:
            self._usage = usage_of(chunk.usage)
        events: list[StreamEvent] = []
        for choice in chunk.choices or ():
            if choice.index:  # n > 1 is never requested; only the first choice counts
                continue
            if choice.delta is not None:
                events.extend(self._delta(choice.delta))
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
        return events

    @property
    def finished(self) -> bool:
        """Whether a `finish_reason` arrived: a stream cut short never sends one."""
        return self._finish_reason is not None

    def response(self) -> ModelResponse:
        """The whole reply, assembled from everything fed so far."""
        calls = tuple(
            ToolCall(id=call.id, name=call.name, arguments=call.arguments)
            for _, call in sorted(self._calls.items())
        )
        text = "".join(self._text) or None
        refused = text is None and bool(self._refusal)
        reason = stop_reason(self._finish_reason, has_tool_calls=bool(calls))
        return ModelResponse(
            text="".join(self._refusal) if refused else text,
            tool_calls=calls,
            stop_reason="refusal" if refused else reason,
            usage=self._usage,
            model=self._served_model or self._model,
        )

    def _delta(self, delta: ChoiceDelta) -> Iterator[StreamEvent]:
        if delta.content:
            self._text.append(delta.content)
            yield TextDelta(text=delta.content)
        if delta.refusal:
            self._refusal.append(delta.refusal)
            yield TextDelta(text=delta.refusal)
        for part in delta.tool_calls or ():
            yield self._tool_part(part)

    def _tool_part(self, part: ChoiceDeltaToolCall) -> ToolCallDelta:
        function = part.function
        name = (function.name if function is not None else None) or ""
        arguments = (function.arguments if function is not None else None) or ""
        index = self._index_of(part, starts_call=bool(part.id or name))
        call = self._calls.get(index)
        if call is None:
            call = _PartialCall(id=call_id(part.id, index), name=name, arguments=arguments)
            self._calls[index] = call
            return ToolCallDelta(index=index, id=call.id, name=name or None, arguments=arguments)
        call.arguments += arguments
        late_name = name if name and not call.name else None
        if late_name:
            call.name = late_name
        return ToolCallDelta(index=index, name=late_name, arguments=arguments)

    def _index_of(self, part: ChoiceDeltaToolCall, *, starts_call: bool) -> int:
        if isinstance(part.index, int):
            return part.index
        known = [n for n, call in self._calls.items() if part.id and call.id == part.id]
        if known:
            return known[0]
        if starts_call or not self._calls:
            return len(self._calls)
        return max(self._calls)
