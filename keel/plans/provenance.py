"""Where a recorded plan's values came from, besides the request (plan-cache spec §3.6, seed 003).

    context = RecordContext(memory={"project.user_id": "u-ann"},
                            earlier=("my order is #W1001",), outputs={1: '{"ok": true}'})
    context.memory_key("u-ann")            -> "project.user_id"   (re-resolved on serve)
    context.seen("#W1001", before_step=2)  -> True                (not cacheable)

At record time every literal argument of the executed plan that is not a span of the
current request is classified here:

* **memory**: it equals the value of exactly one memory entry the skill may read (a scalar:
  text of two characters or more, or a number); the template holds `${MEMORY:key}` instead,
  re-resolved in the memory of whoever the plan serves next (unset or unreadable there: the
  hit is refused, `memory_unset`);
* **context**: it occurs in the conversation but not in the request: an earlier turn's user
  message, bot message or tool output, a memory value it does not equal (inside a longer
  text or a JSON entry), or the output of an earlier step of this turn: the plan is not
  cacheable (`context_value`); it carries one customer's data and nothing would find the
  next customer's;
* else a **constant** (the skill's text, a schema enum or default, the model's own choice):
  the compiler's rules for unaligned literals apply as before.

Occurrence is word-bounded and case-insensitive; a text must hold a letter or a digit, and
one-character values are constants (they identify nobody). `RecordContext.words` are the
name-like words of the context, checked in the final message (`keel.plans.compiler`). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

MEMORY_PREFIX: Final = "memory:"
"""Runtime keys that carry a memory value for `${MEMORY:key}` (`memory:project.user_id`)."""
NAME_LIKE: Final = re.compile(r"(?<![\w'])([A-Z][a-z]+(?:[-'][A-Za-z]+)*)\b")
"""A capitalised word: a name, a street, a city."""
SENTENCE_START: Final = re.compile(r"(?:^|[.!?:;\n]\s*|\"|\()$")


@dataclass(frozen=True, kw_only=True, slots=True)
class RecordContext:
    """What the conversation held when a plan was recorded, apart from the request."""

    memory: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Qualified key -> value of the memory entries the skill may read."""
    hidden: tuple[str, ...] = ()
    """Texts of memory values the skill may not read (seen, never re-resolved)."""
    earlier: tuple[str, ...] = ()
    """Earlier turns of the conversation: user messages, bot messages, tool outputs."""
    outputs: Mapping[int, str] = field(default_factory=lambda: MappingProxyType({}))
    """Step id -> the text of that step's output in this turn."""

    def memory_key(self, value: object) -> str | None:
        """The one memory entry whose value equals `value` (None: none, or several)."""
        if not _identifying(value):
            return None
        keys = [k for k, v in sorted(self.memory.items()) if _same(v, value)]
        return keys[0] if len(keys) == 1 else None

    def seen(self, value: object, *, before_step: int | None = None) -> bool:
        """`value` occurs in the conversation: memory (any entry), an earlier turn, or the
        output of a step before `before_step` of this turn (every step when None)."""
        if not _identifying(value):
            return False
        pattern = occurrence(str(value))
        return any(pattern.search(text) for text in self._texts(before_step))

    def words(self, request: str) -> frozenset[str]:
        """The lower-cased words of the context and the request (for name-like checks)."""
        found: set[str] = set()
        for text in (*self._texts(None), request):
            found |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text)}
        return frozenset(found)

    def memory_texts(self) -> tuple[str, ...]:
        """Every memory value the skill may read that could identify someone, as text."""
        return tuple(_text(v) for v in self.memory.values() if _identifying(v))

    def _texts(self, before_step: int | None) -> list[str]:
        steps = [
            text
            for step, text in sorted(self.outputs.items())
            if before_step is None or step < before_step
        ]
        return [*(_text(v) for v in self.memory.values()), *self.hidden, *self.earlier, *steps]


NO_CONTEXT: Final = RecordContext()
"""A record with no conversation around it (benchmarks, unit tests)."""


def occurrence(value: str) -> re.Pattern[str]:
    """`value` as a word-bounded, case-insensitive pattern."""
    return re.compile(rf"(?<![\w]){re.escape(value.strip())}(?![\w])", re.IGNORECASE)


def name_like(text: str) -> list[str]:
    """Capitalised words of `text` that do not start a sentence (those are any word)."""
    out: list[str] = []
    for match in NAME_LIKE.finditer(text):
        if SENTENCE_START.search(text[: match.start()]) is None:
            out.append(match.group(1))
    return out


def _identifying(value: object) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return len(str(abs(value)).replace(".", "")) >= 2
    if isinstance(value, str):
        core = value.strip()
        return len(core) >= 2 and any(c.isalnum() for c in core)
    return False


def _same(stored: object, value: object) -> bool:
    if isinstance(stored, bool) or isinstance(value, bool):
        return False
    if isinstance(stored, str) and isinstance(value, str):
        return stored.strip() == value.strip()
    if isinstance(stored, int | float) and isinstance(value, int | float):
        return stored == value
    return False


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
