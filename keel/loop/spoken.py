"""The spoken form of a bot message: what a voice channel says aloud (spec §9.4).

A voice channel has no buttons and no formatting, so `spoken_text` turns a message into
plain sentences: markdown (emphasis, headings, list markers, code, links, tables) is
stripped to its words, a link reads as its label, emoji and other pictographs are dropped,
and buttons are read as the choices: "Yes or no?" for two, "You can say: A, B or C." for
more (their titles, in order; payloads are never read). Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Final

from keel.events.model import BotMessage

CHOICES_INTRO: Final = "You can say"
"""Opens the spoken list of three or more button titles."""

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"<?https?://\S+>?")
_CODE_FENCE = re.compile(r"^\s*```.*$", re.MULTILINE)
_INLINE_CODE = re.compile(r"`([^`]*)`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE)
_QUOTE = re.compile(r"^\s*>\s?", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+", re.MULTILINE)
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*$", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1")
_SPACES = re.compile(r"[ \t]+")
_SPACE_BEFORE_MARK = re.compile(r"\s+([,.!?;:])")
_SENTENCE_END: Final = ".!?:;"


def spoken_text(message: BotMessage) -> str:
    """What to say for `message`: its plain text, then its buttons read as choices."""
    text = plain_text(message.text)
    choices = read_choices([b.title for b in message.buttons])
    if not choices:
        return text
    if text and text[-1] not in _SENTENCE_END:
        text += "."
    return f"{text} {choices}".strip()


def plain_text(markdown: str) -> str:
    """`markdown` reduced to the words a person would say, one line per sentence run."""
    text = _CODE_FENCE.sub("", markdown)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _URL.sub("", text)
    text = _INLINE_CODE.sub(lambda m: m.group(1), text)
    text = _TABLE_RULE.sub("", text)
    text = _RULE.sub("", text)
    text = _HEADING.sub("", text)
    text = _QUOTE.sub("", text)
    text = _BULLET.sub("", text)
    for _ in range(3):  # nested emphasis (***x***) unwraps one level per round
        text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = text.replace("|", ", ")
    text = "".join(ch for ch in text if not _pictograph(ch))
    lines = [
        _SPACE_BEFORE_MARK.sub(r"\1", _SPACES.sub(" ", line)).strip(" ,")
        for line in text.splitlines()
    ]
    sentences: list[str] = []
    for line in lines:
        if not line:
            continue
        # A list item or a heading ends where its line ends: said as its own sentence.
        if sentences and sentences[-1][-1] not in _SENTENCE_END:
            sentences[-1] += "."
        sentences.append(line)
    return " ".join(sentences)


def read_choices(titles: Sequence[str]) -> str:
    """Button titles as a spoken question: '' for none, 'A?' for one, 'A or B?' for two,
    'You can say: A, B or C.' for more."""
    said = [plain_text(t).rstrip(_SENTENCE_END) for t in titles]
    said = [t for t in said if t]
    if not said:
        return ""
    if len(said) == 1:
        return f"{said[0]}?"
    if len(said) == 2:
        return f"{said[0]} or {said[1]}?"
    return f"{CHOICES_INTRO}: {', '.join(said[:-1])} or {said[-1]}."


def _pictograph(ch: str) -> bool:
    """Emoji, symbols of the 'So' category and variation selectors are not spoken."""
    if ch in "\u200d\ufe0e\ufe0f":
        return True
    return unicodedata.category(ch) == "So"
