"""Fitting earlier conversation into the model's budget (pure).

Policy: the system prompt and this turn's messages (the user message, the model's tool
calls and their results) are always sent. Earlier user and bot messages are kept newest
first while they fit `budget - (system prompt + this turn + tool schemas)` tokens, and at
most `max_messages` of them; older ones are dropped (not summarised). Nothing the current
step needs lives in the dropped part: the pending confirmation, the active skill's
collected values and memory are in the system prompt, and this turn's tool results are in
this turn's messages. Tokens are estimated as a quarter of the JSON length, rounded up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from keel.llm.port import Message

DEFAULT_MAX_MESSAGES = 40
"""Earlier user/bot messages shown at most, whatever the budget."""


def estimate_tokens(item: object) -> int:
    """A cheap, provider-neutral token estimate: JSON characters / 4, rounded up."""
    return -(-len(json.dumps(item, default=str, ensure_ascii=False)) // 4)


@dataclass(frozen=True, kw_only=True, slots=True)
class Fitted:
    """The earlier messages to send, and what fitting them cost."""

    messages: tuple[Message, ...]
    dropped: int
    tokens_before: int
    tokens_after: int


def fit_history(
    earlier: Sequence[Message],
    *,
    fixed_tokens: int,
    budget: int | None,
    max_messages: int = DEFAULT_MAX_MESSAGES,
) -> Fitted:
    """Keep the newest `earlier` messages that fit; `fixed_tokens` is what is always sent."""
    sizes = [estimate_tokens(m) for m in earlier]
    room = None if budget is None else max(budget - fixed_tokens, 0)
    kept = 0
    used = 0
    for size in reversed(sizes):
        if kept >= max_messages or (room is not None and used + size > room):
            break
        kept += 1
        used += size
    chosen = tuple(earlier[len(earlier) - kept :]) if kept else ()
    return Fitted(
        messages=chosen,
        dropped=len(earlier) - kept,
        tokens_before=fixed_tokens + sum(sizes),
        tokens_after=fixed_tokens + used,
    )
