"""Fitting earlier conversation into the model's budget (pure).

Policy: the system prompt and this turn's messages (the user message, the model's tool
calls and their results) are always sent. Earlier turns come as *units*, oldest first: a
user or bot message, or a tool call/result pair (an assistant message with tool calls and
every tool message answering it, `keel.loop.history_log`). Units are kept newest first
while they fit `budget - (system prompt + this turn + tool schemas)` tokens; the older ones
are dropped (not summarised), a pair always as a whole, so no tool result is ever sent
without its call, nor a call without its results. With no budget nothing is dropped,
however long the conversation. Nothing the current step needs lives in the dropped part:
the pending confirmation, the active skill's collected values and memory are in the system
prompt, and this turn's tool results are in this turn's messages. Tokens are estimated as
a quarter of the JSON length, rounded up, message by message; with no budget nothing is
estimated (`keep_all`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from keel.llm.port import Message

Unit = tuple[Message, ...]
"""One message, or an assistant tool-call message followed by all its tool results."""


def estimate_tokens(item: object) -> int:
    """A cheap, provider-neutral token estimate: JSON characters / 4, rounded up."""
    return -(-len(json.dumps(item, default=str, ensure_ascii=False)) // 4)


def is_tool_pair(unit: Unit) -> bool:
    """Whether `unit` is a tool call/result pair (not a lone user or bot message)."""
    return bool(unit) and bool(unit[0].get("tool_calls"))


@dataclass(frozen=True, kw_only=True, slots=True)
class Fitted:
    """The earlier messages to send, and what fitting them cost."""

    messages: tuple[Message, ...]
    dropped: int
    """Earlier messages left out (a dropped pair counts its call and each result)."""
    dropped_tool_pairs: int = 0
    """Tool call/result pairs among the dropped units."""
    dropped_tool_results: int = 0
    """Tool results (tool messages) among the dropped messages."""
    tokens_before: int | None
    """Estimated tokens of the whole request before fitting; None when nothing was
    estimated (no budget: `keep_all`)."""
    tokens_after: int | None


def unit_tokens(unit: Unit) -> int:
    """The estimated tokens of one unit (its messages' estimates added up)."""
    return sum(estimate_tokens(m) for m in unit)


def keep_all(messages: tuple[Message, ...]) -> Fitted:
    """No budget: every earlier message is sent, and nothing needs estimating."""
    last = _last_kept[0]
    if last is not None and last.messages is messages:
        return last  # the same history as the previous call's (a value: shared)
    fitted = _last_kept[0] = Fitted(
        messages=messages, dropped=0, tokens_before=None, tokens_after=None
    )
    return fitted


_last_kept: list[Fitted | None] = [None]


def fit_history(
    earlier: Sequence[Unit],
    *,
    fixed_tokens: int,
    budget: int | None,
    sizes: Sequence[int] | None = None,
) -> Fitted:
    """Keep the newest `earlier` units that fit; `fixed_tokens` is what is always sent.
    `sizes` are the units' `unit_tokens`, when already known."""
    if sizes is None:
        sizes = [unit_tokens(unit) for unit in earlier]
    room = None if budget is None else max(budget - fixed_tokens, 0)
    kept = 0
    used = 0
    for size in reversed(sizes):
        if room is not None and used + size > room:
            break  # the newest units that fit, contiguous: no gap in the conversation
        kept += 1
        used += size
    dropped = earlier[: len(earlier) - kept]
    chosen = tuple(m for unit in earlier[len(earlier) - kept :] for m in unit)
    return Fitted(
        messages=chosen,
        dropped=sum(len(unit) for unit in dropped),
        dropped_tool_pairs=sum(1 for unit in dropped if is_tool_pair(unit)),
        dropped_tool_results=sum(1 for u in dropped for m in u if m["role"] == "tool"),
        tokens_before=fixed_tokens + sum(sizes),
        tokens_after=fixed_tokens + used,
    )
