"""Small talk: a message that is only a greeting, thanks, a goodbye, a yes, a no or a stop.

Pure and deterministic (English phrases). The offline router answers such a message
itself instead of routing it to a skill: "no" or "bye" after "anything else?" is not a
request for any skill, and an embedding of "yes" is close to nothing in particular. A
message counts only when every word of it belongs to such phrases ("thanks, bye" is a
goodbye; "thanks, I want to return my shoes" is not small talk). A message without a
letter or a digit ("???", "...") is `empty`.
"""

from __future__ import annotations

import re
from typing import Literal

SmallTalk = Literal["greeting", "thanks", "goodbye", "no", "yes", "stop", "empty"]

_PHRASES: dict[SmallTalk, tuple[str, ...]] = {
    "goodbye": (
        "bye",
        "bye bye",
        "goodbye",
        "good bye",
        "see you",
        "see ya",
        "later",
        "that's all",
        "that is all",
        "that's it",
        "that is it",
        "nothing else",
        "nothing more",
        "i'm done",
        "i am done",
        "all done",
        "all good",
        "i'm good",
        "i am good",
        "no thanks",
        "no thank you",
        "have a good day",
        "have a nice day",
        "good night",
    ),
    "stop": (
        "stop",
        "never mind",
        "nevermind",
        "forget it",
        "cancel that",
        "quit",
        "exit",
        "start over",
        "leave it",
    ),
    "thanks": ("thanks", "thank you", "thank u", "thx", "ty", "cheers", "appreciate it", "great"),
    "no": ("no", "nope", "nah", "not really", "not now", "no no"),
    "yes": ("yes", "yeah", "yep", "yup", "sure", "ok", "okay", "please", "yes please", "alright"),
    "greeting": (
        "hi",
        "hello",
        "hey",
        "hiya",
        "howdy",
        "yo",
        "good morning",
        "good afternoon",
        "good evening",
        "how are you",
    ),
}
_ORDER: tuple[SmallTalk, ...] = ("goodbye", "stop", "thanks", "no", "yes", "greeting")
"""When a message mixes kinds, the first of these it holds wins ("thanks, bye": goodbye)."""
_FILLER = frozenset({"there", "so", "much", "very", "a", "lot", "again", "then", "oh", "well"})
_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def small_talk(text: str) -> SmallTalk | None:
    """The kind of small talk `text` is, or None when it says anything else."""
    words = _words(text)
    if not words:
        return "empty"
    found: set[SmallTalk] = set()
    position = 0
    while position < len(words):
        if words[position] in _FILLER:
            position += 1
            continue
        match = _longest(words, position)
        if match is None:
            return None
        kind, length = match
        found.add(kind)
        position += length
    return next((kind for kind in _ORDER if kind in found), None)


def _longest(words: list[str], start: int) -> tuple[SmallTalk, int] | None:
    """The longest phrase of any kind that starts at `words[start]`."""
    best: tuple[SmallTalk, int] | None = None
    for kind in _ORDER:
        for phrase in _PHRASES[kind]:
            parts = phrase.split()
            if words[start : start + len(parts)] == parts and (
                best is None or len(parts) > best[1]
            ):
                best = (kind, len(parts))
    return best


__all__ = ["SmallTalk", "small_talk"]
