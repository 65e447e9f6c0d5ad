"""What one model call carried, Keel's request next to gpt-4o's at the same point (pure).

A recorded conversation is a list of OpenAI chat messages; gpt-4o's context for its k-th
reply is every message before that reply. Keel's request for the same reply is the body
its OpenAI adapter sent (`messages`, `tools`). For each pair this module counts:

* earlier-turn tool results: the `tool` messages gpt-4o had that were produced in an
  earlier user turn (before the context's last user message), and how many of them Keel's
  request carries;
* user texts: the user messages gpt-4o had, and how many Keel carries;
* bot texts: the same for the assistant's own texts (not a goal, shown for reading);
* the prompt size of both, as the serialised request (below), in characters and estimated
  tokens (characters / 4, rounded up: the estimate `keel.loop.history` budgets with);
* and, across consecutive requests of one conversation, the share of a request whose
  leading characters repeat the previous request's byte for byte.

A provider caches a prompt's prefix, so what matters is how far two requests agree from
the first byte; two serialisations are measured, the messages and tools in the order the
adapter sent them in both:

* system first (`serialise`): the leading system message(s), then the tool schemas, then
  the other messages, each as compact JSON;
* tools first (`tools_first`): each tool schema, then each message, a line of JSON each:
  `keel.llm.prefix.request_text` when Keel has it (else the same text built here), the
  order Anthropic builds its cached prefix in (tools, system, messages).

Shares are `keel.llm.prefix.prefix_share` when Keel has it, else the same function here.

A recorded tool result is "present" when Keel's request holds a tool message with the
content Keel's tool gave for that call when it was made (`fed_results`; where that call
was not compared, the recorded content, its `province` key read as the `state` that
`db.json` has, see the data README), each Keel message standing for one recorded result;
results of the current turn are matched first, so an earlier result counts only if a
message is left for it. A non-empty result that Keel carries inside another message's
text (a summary, a system block) also counts. So a tool that answers otherwise than
recorded (a policy refusal) is not counted as lost history; how often that happens is
counted apart (`current_as_recorded`). A user or bot text is present when a Keel message
of that role contains it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from keel.llm.port import Message, ModelRequest, ToolSchema

_shared: ModuleType | None
try:  # the shared measure, when this tree of Keel has it
    from keel.llm import prefix as _shared
except ImportError:  # an older tree: the same functions below
    _shared = None
_keel_prefix_share: Callable[[str, str], float] | None = getattr(_shared, "prefix_share", None)
_keel_request_text: Callable[[ModelRequest], str] | None = getattr(_shared, "request_text", None)

PREFIX_SOURCE = "keel.llm.prefix" if _keel_request_text is not None else "bench/fidelity"
"""Where the prefix share and the tools-first text come from in this run."""

Section = Literal["system", "tools", "messages", "none"]
"""Where two serialised requests first differ (`none`: one is a prefix of the other)."""

CHARS_PER_TOKEN = 4
"""The token estimate: characters / 4, rounded up (as `keel.loop.history` estimates)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Serialised:
    """A request as one string, and where its system part and tool part end."""

    text: str
    system_end: int
    tools_end: int

    @property
    def tokens(self) -> int:
        """Estimated tokens: characters / 4, rounded up."""
        return math.ceil(len(self.text) / CHARS_PER_TOKEN)

    def section_at(self, index: int) -> Section:
        """The part of the request the character at `index` belongs to."""
        if index >= len(self.text):
            return "none"
        if index < self.system_end:
            return "system"
        return "tools" if index < self.tools_end else "messages"


@dataclass(frozen=True, kw_only=True, slots=True)
class CallComparison:
    """One model call: gpt-4o's context and Keel's request at the same point."""

    earlier_results: int
    """Tool results from earlier user turns in gpt-4o's context."""
    earlier_present: int
    """How many of those Keel's request carried."""
    current_results: int
    """Tool results of the current user turn in gpt-4o's context."""
    current_present: int
    """How many of those Keel carried (a check on the matching: should be all)."""
    current_as_recorded: int
    """How many of those Keel's tools answered as recorded (the rest: another output)."""
    user_texts: int
    user_present: int
    bot_texts: int
    bot_present: int
    keel: Serialised
    recorded: Serialised


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestText:
    """One request in the two serialisations the prefix share is measured on."""

    system_first: Serialised
    tools_first: str


def request_texts(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> RequestText:
    """`messages` and `tools` (as sent) serialised system first and tools first."""
    return RequestText(
        system_first=serialise(messages, tools), tools_first=tools_first(messages, tools)
    )


def serialise(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> Serialised:
    """Leading system message(s), then the tools, then the other messages, as compact JSON."""
    lead = 0
    while lead < len(messages) and messages[lead].get("role") == "system":
        lead += 1
    system = "".join(_json(m) for m in messages[:lead])
    schemas = _json(list(tools)) if tools else ""
    rest = "".join(_json(m) for m in messages[lead:])
    return Serialised(
        text=system + schemas + rest,
        system_end=len(system),
        tools_end=len(system) + len(schemas),
    )


def tools_first(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """Each tool schema, then each message, one line of JSON each (`request_text`)."""
    schemas = [_schema(tool) for tool in tools]
    if _keel_request_text is not None:
        request = ModelRequest(messages=tuple(_message(m) for m in messages), tools=tuple(schemas))
        return _keel_request_text(request)
    lines = [
        json.dumps(
            {"name": t.name, "description": t.description, "parameters": t.parameters},
            ensure_ascii=False,
        )
        for t in schemas
    ]
    lines += [json.dumps(dict(m), ensure_ascii=False) for m in messages]
    return "\n".join(lines)


def _schema(tool: Any) -> ToolSchema:
    function = tool.get("function", tool) if isinstance(tool, Mapping) else {}
    parameters = function.get("parameters")
    return ToolSchema(
        name=str(function.get("name") or ""),
        description=str(function.get("description") or ""),
        parameters=parameters if isinstance(parameters, Mapping) else {},
    )


def _message(message: Mapping[str, Any]) -> Message:
    return message  # type: ignore[return-value]  # a wire message, as the request holds it


def common_prefix(first: str, second: str) -> int:
    """The number of leading characters two strings share."""
    limit = min(len(first), len(second))
    low, high = 0, limit
    # Binary search on slice equality: C-speed comparisons instead of a Python loop.
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def prefix_share(previous: str, current: str) -> float:
    """The share of `current` whose leading characters repeat `previous` (0.0 if empty)."""
    if _keel_prefix_share is not None:
        return _keel_prefix_share(previous, current)
    if not current:
        return 0.0
    return common_prefix(previous, current) / len(current)


def first_difference(previous: Serialised, current: Serialised) -> Section:
    """Where `current` first departs from `previous`."""
    return current.section_at(common_prefix(previous.text, current.text))


def turn_of_each(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each message, the 0-based number of the user turn it belongs to (-1 before any)."""
    turns: list[int] = []
    turn = -1
    for message in messages:
        if message.get("role") == "user":
            turn += 1
        turns.append(turn)
    return turns


def compare_call(
    context: Sequence[Mapping[str, Any]],
    recorded_tools: Sequence[Any],
    keel_body: Mapping[str, Any],
    served_as: Mapping[int, str] | None = None,
) -> CallComparison:
    """gpt-4o's `context` (the recorded messages before its reply, sent with
    `recorded_tools`) next to the body Keel sent for the same reply. `served_as` maps the
    position of a recorded tool message in `context` to the content Keel's tool gave for
    that call (`fed_results`): a result is looked for as Keel served it, so a tool that
    answers otherwise than recorded (a policy refusal) does not count as lost history."""
    served = served_as or {}
    keel_messages: list[Mapping[str, Any]] = list(keel_body.get("messages") or [])
    turns = turn_of_each(context)
    current = turns[-1] if turns else -1
    tools = [(i, m, t) for i, (m, t) in enumerate(zip(context, turns, strict=True))]
    tools = [(i, m, t) for i, m, t in tools if m.get("role") == "tool"]
    earlier = [served.get(i, recorded_content(m)) for i, m, t in tools if t < current]
    now = [(served.get(i), recorded_content(m)) for i, m, t in tools if t == current]
    pool = Counter(text_of(m) for m in keel_messages if m.get("role") == "tool")
    current_present = _take(pool, [keel if keel is not None else rec for keel, rec in now])
    other_text = "\n".join(text_of(m) for m in keel_messages if m.get("role") != "tool")
    earlier_present = _take(pool, earlier, fallback=other_text)
    users = [text_of(m) for m in context if m.get("role") == "user"]
    bots = [text_of(m) for m in context if m.get("role") == "assistant" and text_of(m)]
    return CallComparison(
        earlier_results=len(earlier),
        earlier_present=earlier_present,
        current_results=len(now),
        current_present=current_present,
        current_as_recorded=sum(1 for keel, rec in now if keel is None or keel == rec),
        user_texts=len(users),
        user_present=_contained(users, keel_messages, "user"),
        bot_texts=len(bots),
        bot_present=_contained(bots, keel_messages, "assistant"),
        keel=serialise(keel_messages, keel_body.get("tools") or []),
        recorded=serialise(context, recorded_tools),
    )


def fed_results(
    context: Sequence[Mapping[str, Any]], keel_body: Mapping[str, Any]
) -> dict[int, str]:
    """Position in `context` of each tool result recorded since gpt-4o's previous reply ->
    the content of the tool result Keel fed back at the same place (the tool messages
    after the last assistant message of each, paired in order, as the strict replay
    checks them)."""
    keel_messages: list[Mapping[str, Any]] = list(keel_body.get("messages") or [])
    recorded = _after_last_reply(list(enumerate(context)))
    fed = _after_last_reply(list(enumerate(keel_messages)))
    return {i: text_of(keel) for (i, _m), (_k, keel) in zip(recorded, fed, strict=False)}


def _after_last_reply(
    messages: Sequence[tuple[int, Mapping[str, Any]]],
) -> list[tuple[int, Mapping[str, Any]]]:
    start = 0
    for position, (_index, message) in enumerate(messages):
        if message.get("role") == "assistant":
            start = position + 1
    return [(i, m) for i, m in messages[start:] if m.get("role") == "tool"]


def recorded_content(message: Mapping[str, Any]) -> str:
    """A recorded tool result as `db.json` gives it (`province` was renamed `state`)."""
    return text_of(message).replace('"province"', '"state"')


def text_of(message: Mapping[str, Any]) -> str:
    """A message's text: its string content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, Mapping))
    return ""


def _take(pool: Counter[str], wanted: Sequence[str], *, fallback: str = "") -> int:
    """How many of `wanted` are in `pool` (each pooled message used once), or, when not
    empty, inside `fallback`."""
    found = 0
    for text in wanted:
        if pool[text] > 0:
            pool[text] -= 1
            found += 1
        elif text and text in fallback:
            found += 1
    return found


def _contained(texts: Sequence[str], messages: Sequence[Mapping[str, Any]], role: str) -> int:
    """How many `texts` are inside a distinct Keel message of `role`."""
    free = [text_of(m) for m in messages if m.get("role") == role]
    found = 0
    for text in texts:
        for index, candidate in enumerate(free):
            if text in candidate:
                del free[index]
                found += 1
                break
    return found


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
