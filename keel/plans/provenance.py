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
one-character values are constants (they identify nobody).

For the final message (`keel.plans.compiler`): `RecordContext.words` are the words of the
context and the request (a capitalised word inside a sentence is checked against them);
`memory_words` the words of the memory values the skill may read (two letters or more, not
a function word: a first name, a surname, a city), each of which drops a message wherever
it stands; `source_words` the words a name at a sentence start may come from (memory,
earlier user messages and tool outputs, this turn's outputs; not the bot's own earlier
replies, whose "Sure" or "Your" start sentences of any reply; of this turn's outputs, the
words written capitalised, so a status "done" does not drop "Done: task 4"). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from keel.plans.lexicon import STOPWORDS

MEMORY_PREFIX: Final = "memory:"
"""Runtime keys that carry a memory value for `${MEMORY:key}` (`memory:project.user_id`)."""
NAME_LIKE: Final = re.compile(r"(?<![\w'])([A-Z][a-z]+(?:[-'][A-Za-z]+)*)\b")
"""A capitalised word: a name, a street, a city."""
SENTENCE_START: Final = re.compile(r"(?:^|[.!?:;\n]\s*|\"|\()$")
_WORD: Final = re.compile(r"[^\W\d_](?:[^\W\d_]|['-](?=[^\W\d_]))+")
"""A word of two letters or more (apostrophes and hyphens inside: `O'Neil`, `Anne-Marie`)."""


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
    replies: tuple[str, ...] = ()
    """The bot's earlier replies: seen like `earlier`, but no source of sentence-start names
    (a caller that cannot tell them apart puts them in `earlier`, which only drops more)."""

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
        texts = (*self._texts(before_step), *self.replies)
        return any(pattern.search(text) for text in texts)

    def words(self, request: str) -> frozenset[str]:
        """The lower-cased words of the context and the request (for name-like checks)."""
        found: set[str] = set()
        for text in (*self._texts(None), *self.replies, request):
            found |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text)}
        return frozenset(found)

    def memory_texts(self) -> tuple[str, ...]:
        """Every memory value the skill may read that could identify someone, as text."""
        return tuple(_text(v) for v in self.memory.values() if _identifying(v))

    def memory_words(self) -> frozenset[str]:
        """The lower-cased words of the text memory values the skill may read (the strings
        inside a structured value too, not its keys): two letters or more, no function
        word. "Yusuf Rossi" gives `yusuf`, `rossi`; "yusuf@shop.io" `yusuf`, `shop`."""
        found: set[str] = set()
        for value in self.memory.values():
            for text in _strings(value):
                found |= content_words(text)
        return frozenset(found)

    def source_words(self) -> frozenset[str]:
        """The lower-cased words a name at a sentence start may come from: the words of
        every memory text (readable or not) and of the earlier user messages and tool
        outputs, and the capitalised words of this turn's outputs ("Yusuf" of a profile
        look-up; its status "done" is no name); of a JSON text, its string values, not its
        keys; never the bot's earlier replies (`replies`)."""
        memory = [*(_text(v) for v in self.memory.values()), *self.hidden, *self.earlier]
        found = {w for text in memory for s in _strings(_decoded(text)) for w in content_words(s)}
        for text in self.outputs.values():
            for value in _strings(_decoded(text)):
                found |= {w.casefold() for w, _ in capitalised(value)} - STOPWORDS
        return frozenset(found)

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
    return [word for word, start in capitalised(text) if not start]


def sentence_starts(text: str) -> list[str]:
    """Capitalised words of `text` that start a sentence ("Lena" of "Lena, you have ...")."""
    return [word for word, start in capitalised(text) if start]


def capitalised(text: str) -> list[tuple[str, bool]]:
    """Each capitalised word of `text`, and whether it starts a sentence."""
    return [
        (match.group(1), SENTENCE_START.search(text[: match.start()]) is not None)
        for match in NAME_LIKE.finditer(text)
    ]


def content_words(text: str) -> set[str]:
    """The lower-cased words of `text` that could identify someone: two letters or more,
    not a function word (`keel.plans.lexicon.STOPWORDS`)."""
    words = {w.casefold() for w in _WORD.findall(text)}
    return {w for w in words if w not in STOPWORDS}


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


def _strings(value: object) -> list[str]:
    """The strings of a memory value: itself, or the string leaves of a structured one."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


def _decoded(text: str) -> object:
    """A JSON object or list read back (its keys name no one), else the text itself."""
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
