"""Earlier turns as the model saw them, read back from the event log (seed 004: tool
results are kept "so the next turn can reconstruct the exact context the model saw").

`read_history` turns the log before this turn into units (`keel.loop.history.Unit`),
oldest first: user messages (a tap reads as its button title, control messages are left
out, nothing before a `/restart` is read), bot messages, and, when tool results are kept,
each model reply's tool calls with their results, where they happened:

* the assistant message is the reply as recorded in `model_called.metadata.reply` (its
  text, and every call with its id, name and raw argument text), as `keel.loop.calls`
  put it in that turn's transcript: a `listen` dropped for coming with other calls is
  left out, and the bot message that said the reply's text is not repeated;
* each call's result is the text the model was told: `tool_executed.result` (the string
  the model saw), a refusal's text (`tool_call_refused`: `Error (<code>): <message>`, the
  argument errors as their message), or a held call's `awaiting_confirmation` answer
  (`pause_point_created`); when two runs share a call id (`resolve_tool_confirmation`
  runs the held tool under its own call id) the one named like the call wins;
* bot messages said while the calls ran follow the results (chat APIs reject anything
  between a call and its results); a call that got no result is left out of its message,
  and a message left with none is sent as its text alone (or not at all);
* a cached plan's step (`tool_executed` with `metadata.plan`) is the one-call pair the
  plan runner put in its transcript.

A held call's `awaiting_confirmation` answer is not shown as live once its pause is over:
after `pause_point_resolved` it reads `{"status": "resolved", "asked": ..., "outcome":
"approved" | "declined" | "withdrawn (<reason>)"}`, with the held run's `result` when it
ran where the model did not see it (the approval API, the no-model yes). Tool runs of
ordered-block steps (`execute_tool`) never were in a model's transcript and are not here.

`HistoryLog` gives the same result without reading the whole log on every model call: it
keeps a conversation's earlier units as read so far and reads only the events appended
since (the log is append-only; the engine's log cache hands every turn the same event
objects), and this turn's part as it grows. A message once given out is never changed: a
held call's answer that changes later is a new message in the unit's place.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Any

from keel.events.model import (
    BotMessage,
    Event,
    ModelCalled,
    PausePointCreated,
    PausePointResolved,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from keel.llm.port import Message, ToolCall, ToolChatMessage, assistant_message, tool_message
from keel.loop.control import RESTART, said_by_user
from keel.loop.history import Unit


def refusal_text(code: str, message: str) -> str:
    """What the model was told for a refused call (`keel.loop.outcome.refuse` and
    `keel.loop.calls`): argument errors as their message, the breaker's short text."""
    if code == "tool.arguments.invalid":
        return message
    if code == "tool.repeated_call":
        return "Error: repeated call"
    return f"Error ({code}): {message}"


@dataclass(kw_only=True, slots=True)
class _Group:
    """An open model reply with tool calls, waiting for its results."""

    content: str | None
    calls: list[ToolCall]
    results: dict[str, ToolChatMessage] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)
    """Call ids whose result came from a run named like the call."""
    said: list[Message] = field(default_factory=list)
    echo: str | None = None
    """The reply's text, which the loop also said as a bot message (not repeated)."""

    def record(self, call_id: str, tool_name: str, content: str) -> None:
        call = next((c for c in self.calls if c.id == call_id), None)
        if call is None or (call_id in self.named and tool_name != call.name):
            return
        self.results[call_id] = tool_message(call_id, content)
        if tool_name == call.name:
            self.named.add(call_id)

    def units(self) -> list[Unit]:
        answered = [c for c in self.calls if c.id in self.results]
        done: list[Unit] = []
        if answered:
            message = assistant_message(self.content, tuple(answered))
            done.append((message, *(self.results[c.id] for c in answered)))
        elif self.content:
            done.append((assistant_message(self.content),))
        return done + [(m,) for m in self.said]


@dataclass(kw_only=True, slots=True)
class _Pause:
    message: ToolChatMessage
    ask: str


def _replaced(units: list[Unit], old: Message, new: Message) -> None:
    """`units` with the unit holding `old` rebuilt around `new` (newest units first)."""
    for index in range(len(units) - 1, -1, -1):
        unit = units[index]
        if any(m is old for m in unit):
            units[index] = tuple(new if m is old else m for m in unit)
            return


class _Reader:
    def __init__(self, tool_results: bool) -> None:
        self.tool_results = tool_results
        self.units: list[Unit] = []
        self.group: _Group | None = None
        self.pauses: dict[str, _Pause] = {}
        self.approved_outside: str | None = None
        """A pause approved with no model call of its own: its held run's result joins it."""

    def close(self) -> None:
        if self.group is not None:
            self.units += self.group.units()
            self.group = None

    def earlier(self, event: Event) -> None:
        # By exact type (event classes have no subclasses): most events are none of these,
        # and a lookup in `_EARLIER` costs no call where a chain of isinstance costs seven.
        kind = type(event)
        if kind is BotMessage:
            self.bot(event)  # type: ignore[arg-type]
        elif self.tool_results and kind in _EARLIER:
            _EARLIER[kind](self, event)

    def boundary(self, _event: Event) -> None:
        """A turn started or ended: an open reply is closed."""
        self.close()

    def bot(self, event: BotMessage) -> None:
        group = self.group
        if group is None:
            self.units.append((assistant_message(event.text),))
        elif group.echo is not None and event.text == group.echo:
            group.echo = None
        else:
            group.said.append(assistant_message(event.text))

    def reply(self, event: ModelCalled) -> None:
        if event.metadata.get("purpose") is not None:
            return  # a planner, filler or rephrase call: not the tool-calling loop's
        self.close()
        reply = event.metadata.get("reply")
        if not isinstance(reply, Mapping):
            return
        parts = reply.get("tool_calls")
        calls = [_call(part) for part in parts] if isinstance(parts, tuple | list) else []
        kept = [c for c in calls if c is not None]
        if not kept:
            return
        raw = reply.get("content")
        text = raw.strip() if isinstance(raw, str) else ""
        self.group = _Group(content=text or None, calls=kept, echo=text or None)

    def executed(self, event: ToolExecuted) -> None:
        group = self.group
        if group is not None and any(c.id == event.tool_call_id for c in group.calls):
            group.record(event.tool_call_id, event.tool_name, event.result)
        elif "plan" in event.metadata:
            self.close()
            # The plan runner's transcript: one call per message, arguments as it ran them.
            arguments = json.dumps(dict(event.arguments), default=str)
            call = ToolCall(id=event.tool_call_id, name=event.tool_name, arguments=arguments)
            self.units.append(
                (assistant_message(None, (call,)), tool_message(call.id, event.result))
            )
        elif event.metadata.get("source") == "tool_confirmation" and self.approved_outside:
            pause = self.pauses.get(self.approved_outside)
            if pause is not None:
                self.answer(pause, _resolved(pause.ask, "approved", event.result))
            self.approved_outside = None

    def refused(self, event: ToolCallRefused) -> None:
        group = self.group
        if group is None:
            return
        if event.code == "listen.dropped":
            group.calls = [c for c in group.calls if c.id != event.tool_call_id]
            return
        group.record(event.tool_call_id, event.tool_name, refusal_text(event.code, event.message))

    def paused(self, event: PausePointCreated) -> None:
        group = self.group
        if group is None:
            return
        for call in group.calls:
            if call.name == event.tool_name and call.id not in group.results:
                content = json.dumps(
                    {"status": "awaiting_confirmation", "message": event.confirmation_ask}
                )
                group.record(call.id, call.name, content)
                self.pauses[event.pause_id] = _Pause(
                    message=group.results[call.id], ask=event.confirmation_ask
                )
                return

    def resolved(self, event: PausePointResolved) -> None:
        pause = self.pauses.get(event.pause_id)
        if pause is None:
            return
        self.answer(pause, _resolved(pause.ask, _outcome(event), None))
        inside = self.group is not None and self.group.calls
        self.approved_outside = event.pause_id if event.approved and not inside else None

    def answer(self, pause: _Pause, content: str) -> None:
        """The held call's message now reads `content`: a new message in its place (one
        already given out in an earlier request stays as it was)."""
        old = pause.message
        new = tool_message(old["tool_call_id"], content)
        pause.message = new
        group = self.group
        if group is not None and group.results.get(old["tool_call_id"]) is old:
            group.results[old["tool_call_id"]] = new
        else:
            _replaced(self.units, old, new)

    def view(self) -> list[Unit]:
        """The units read so far with an open reply closed, leaving this reader as it was."""
        if self.group is None:
            return list(self.units)
        return self.units + self.group.units()


def _outcome(event: PausePointResolved) -> str:
    reason = event.metadata.get("reason")
    if event.approved:
        return "approved"
    if isinstance(reason, str):
        return f"withdrawn ({reason})"
    return "declined"


def _resolved(ask: str, outcome: str, result: str | None) -> str:
    record: dict[str, str] = {"status": "resolved", "asked": ask, "outcome": outcome}
    if result is not None:
        record["result"] = result
    return json.dumps(record)


def _call(part: object) -> ToolCall | None:
    if not isinstance(part, Mapping):
        return None
    function = part.get("function")
    if not isinstance(function, Mapping):
        return None
    call_id, name, arguments = part.get("id"), function.get("name"), function.get("arguments")
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)):
        return None
    return ToolCall(id=call_id, name=name, arguments=arguments)


def read_history(
    events: Sequence[Event], turn_start: int, *, tool_results: bool
) -> tuple[list[Unit], list[Message]]:
    """(earlier units, this turn's user message) from `events`; `turn_start` is the index
    of this turn's first event. Without `tool_results` only user and bot messages."""
    reader = _Reader(tool_results)
    current: list[Message] = []
    for index, event in enumerate(events):
        if index == turn_start:
            reader.close()
        if isinstance(event, UserMessage):
            if event.text.strip() == RESTART:
                # Nothing said before a `/restart` is read; one pass, not a scan back first.
                reader = _Reader(tool_results)
                current.clear()
                continue
            reader.close()
            said = said_by_user(event)
            if said is not None:
                message: Message = {"role": "user", "content": said}
                if index < turn_start:
                    reader.units.append((message,))
                else:
                    current.append(message)
        elif index < turn_start:
            reader.earlier(event)
        elif tool_results and isinstance(event, PausePointResolved):
            reader.resolved(event)  # an earlier turn's question answered in this turn
    reader.close()
    return reader.units, current


def _read_earlier(reader: _Reader, event: Event) -> _Reader:
    """`read_history`'s step for an event before this turn: the reader to go on with."""
    if type(event) is UserMessage:
        if event.text.strip() == RESTART:
            return _Reader(reader.tool_results)
        reader.close()
        said = said_by_user(event)
        if said is not None:
            reader.units.append(({"role": "user", "content": said},))
    else:
        reader.earlier(event)
    return reader


_EARLIER: dict[type, Callable[[_Reader, Any], None]] = {
    ModelCalled: _Reader.reply,
    ToolExecuted: _Reader.executed,
    ToolCallRefused: _Reader.refused,
    PausePointCreated: _Reader.paused,
    PausePointResolved: _Reader.resolved,
    TurnStarted: _Reader.boundary,
    TurnEnded: _Reader.boundary,
}
"""What an event of an earlier turn does to the reader when tool results are kept (a bot
message always counts: `_Reader.earlier`)."""


@dataclass(kw_only=True, slots=True)
class _Earlier:
    """A conversation's log up to `count` events, read as earlier turns (the reader left
    open: the next turn reads on from there as a whole pass would)."""

    reader: _Reader
    count: int = 0
    first: Event | None = None
    last: Event | None = None

    def extends_to(self, events: Sequence[Event]) -> bool:
        """Whether `events` starts with the events read (the same objects)."""
        count = self.count
        if count == 0:
            return True
        return len(events) >= count and events[0] is self.first and events[count - 1] is self.last

    def read(self, events: Sequence[Event]) -> None:
        reader = self.reader
        for event in events[self.count :]:
            # `_read_earlier` and `_Reader.earlier` only for the events they read.
            kind = type(event)
            if kind is UserMessage:
                reader = _read_earlier(reader, event)
            elif kind is BotMessage or (reader.tool_results and kind in _EARLIER):
                reader.earlier(event)
        self.reader = reader
        self.count = len(events)
        if events:
            self.first, self.last = events[0], events[-1]


class _Sizes:
    """Unit sizes already worked out for a conversation, kept across its history results:
    a new result estimates only the units not sized before (by identity)."""

    __slots__ = ("estimate", "sizes", "units")

    def __init__(self) -> None:
        self.estimate: Callable[[Unit], int] | None = None
        self.units: tuple[Unit, ...] = ()
        self.sizes: tuple[int, ...] = ()

    def of(self, units: tuple[Unit, ...], estimate: Callable[[Unit], int]) -> tuple[int, ...]:
        known = self.units if estimate is self.estimate else ()
        same = min(len(known), len(units))
        if not all(map(is_, known[:same], units[:same])):
            same = next(i for i in range(same) if known[i] is not units[i])
        sizes = self.sizes[:same] + tuple(estimate(unit) for unit in units[same:])
        self.estimate, self.units, self.sizes = estimate, units, sizes
        return sizes


class History:
    """`read_history`'s result: the earlier units and this turn's user messages; what is
    derived from them (the earlier messages in one sequence, each unit's size) is worked
    out once per result, sizes once per unit. Read-only: `history_of` gives the same
    object to later calls."""

    __slots__ = ("_known", "_messages", "_sizes", "current", "earlier")

    def __init__(
        self,
        *,
        earlier: tuple[Unit, ...],
        current: tuple[Message, ...],
        known: _Sizes | None = None,
    ) -> None:
        self.earlier = earlier
        self.current = current
        self._known = known or _Sizes()
        self._messages: tuple[Message, ...] | None = None
        self._sizes: tuple[int, ...] | None = None

    def messages(self) -> tuple[Message, ...]:
        """Every earlier message, oldest first."""
        if self._messages is None:
            self._messages = tuple(m for unit in self.earlier for m in unit)
        return self._messages

    def sizes(self, estimate: Callable[[Unit], int]) -> tuple[int, ...]:
        """`estimate` of each earlier unit (the first estimate asked for is kept)."""
        if self._sizes is None:
            self._sizes = self._known.of(self.earlier, estimate)
        return self._sizes


@dataclass(kw_only=True, slots=True)
class _Kept:
    """What one conversation's history reading keeps between model calls."""

    earlier: _Earlier
    current: list[Event] = field(default_factory=list)
    """This turn's events read so far (as given, not copied: checked by identity)."""
    result: History | None = None
    sizes: _Sizes = field(default_factory=_Sizes)


HISTORY_CAPACITY = 256
"""Conversations whose history reading is kept (least recently read dropped first)."""

_kept: OrderedDict[tuple[str, bool], _Kept] = OrderedDict()


def history_of(
    conversation_id: str,
    earlier: Sequence[Event],
    current: Sequence[Event],
    *,
    tool_results: bool,
) -> History:
    """`read_history(earlier + current, len(earlier), tool_results=...)`, reading only what
    was appended since the last call for `conversation_id`: `earlier` is the log before this
    turn, `current` this turn's events so far. A log that does not extend the one read
    before (other event objects, or shorter) is read again from its start."""
    key = (conversation_id, tool_results)
    kept = _kept.pop(key, None)
    if kept is None or not kept.earlier.extends_to(earlier):
        kept = _Kept(earlier=_Earlier(reader=_Reader(tool_results)))
    if kept.earlier.count != len(earlier):
        kept.earlier.read(earlier)
        kept.result = None
    seen, count = len(kept.current), len(current)
    if seen > count or (seen and current[seen - 1] is not kept.current[-1]):
        kept.current, kept.result, seen = [], None, 0
    if seen < count:
        new = current[seen:]
        changing = _CHANGING if tool_results else _USER
        for event in new:
            if type(event) in changing:
                kept.result = None
                break
        kept.current.extend(new)
    if kept.result is None:
        kept.result = _current_view(kept.earlier.reader, kept.current, kept.sizes)
    _kept[key] = kept
    while len(_kept) > HISTORY_CAPACITY:
        _kept.popitem(last=False)
    return kept.result


_USER: frozenset[type[Event]] = frozenset({UserMessage})
_CHANGING: frozenset[type[Event]] = frozenset({UserMessage, PausePointResolved})
"""This turn's events that change what `history_of` returns (without, with tool results)."""


def _current_view(reader: _Reader, events: Sequence[Event], sizes: _Sizes) -> History:
    """The earlier units read by `reader` (left unchanged) with this turn's `events`: its
    user messages, and the earlier questions it answered."""
    units = reader.view()
    pauses = reader.pauses
    answered: dict[str, Message] = {}
    current: list[Message] = []
    for event in events:
        if isinstance(event, UserMessage):
            if event.text.strip() == RESTART:
                units, pauses, current = [], {}, []
                continue
            said = said_by_user(event)
            if said is not None:
                current.append({"role": "user", "content": said})
        elif reader.tool_results and isinstance(event, PausePointResolved):
            pause = pauses.get(event.pause_id)
            if pause is None:
                continue
            old = answered.get(event.pause_id, pause.message)
            content = _resolved(pause.ask, _outcome(event), None)
            new = tool_message(pause.message["tool_call_id"], content)
            _replaced(units, old, new)
            answered[event.pause_id] = new
    return History(earlier=tuple(units), current=tuple(current), known=sizes)
