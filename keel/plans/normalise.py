"""Request normalisation v2 and the L0 exact key (plan-cache spec §3.7).

    normalise("Please, can you delete task #40 in /tmp/Projects?")
        -> "delete task #40 in /tmp/Projects"

Unicode NFKC, case-folded (except file paths and names: `/tmp/A` and `/tmp/a` are different
files), white space collapsed; punctuation removed except the
characters that carry meaning inside paths, globs, numbers and e-mails (`/ \\ . _ - * ? @
+ : ~ # % $`, a comma between digits); apostrophes inside words dropped (`don't` ->
`dont`); sentence punctuation trimmed from token edges. Only politeness and request fillers
are dropped ("please", "can you", "show me"); prepositions and negations are kept, so
"move X to Y" and "move X in Y", "delete X" and "don't delete X" get different keys
(Metnos's stop list conflated them, spec §1.18.9).

The L0 key hashes the normaliser version, the language, the scope and the normalised text:
a change of this module's rules changes `NORMALISER_VERSION` and every key with it. Pure.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from keel.plans.lexicon import EXTENSIONS, straight

NORMALISER_VERSION: Final = "n3"

_KEEP: Final = frozenset("/\\._-*?@+:~#%$,")
_INNER_APOSTROPHE: Final = re.compile(r"(?<=\w)'(?=\w)")
_LONE_COMMA: Final = re.compile(r"(?<!\d),|,(?!\d)")
_TRAIL: Final = ".?:!,;-"
_LEAD: Final = ":,?!;"
_BARE_KEPT: Final = frozenset({"*", "**", "*.*", "/", "~", "\\"})

FILLERS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(phrase.split())
    for phrase in (
        "i would like you to",
        "i want you to",
        "i need you to",
        "id like you to",
        "would you mind",
        "could you",
        "can you",
        "would you",
        "will you",
        "show me",
        "tell me",
        "give me",
        "thank you",
        "please",
        "pls",
        "plz",
        "kindly",
        "thanks",
        "thx",
        "hey",
        "hi",
        "hello",
        # Italian
        "mi faresti il piacere di",
        "ti dispiacerebbe",
        "per piacere",
        "per cortesia",
        "per favore",
        "mi potresti",
        "mi puoi",
        "fammi vedere",
        "potresti",
        "puoi",
        "mostrami",
        "dimmi",
        "gentilmente",
        "grazie",
        "ciao",
    )
)
"""Politeness and request fillers (English, then Italian), longest first in each language
(`mi` only with `puoi`/`potresti`: "mandami"/"mi mandi" say who receives); nothing else is
dropped."""


def normalise(text: str) -> str:
    """The request in normal form v2 (idempotent: `normalise(normalise(t)) == normalise(t)`)."""
    out = _pass(text)
    for _ in range(4):  # case-folding can expose characters a second pass removes
        again = _pass(out)
        if again == out:
            break
        out = again
    return out


def _pass(text: str) -> str:
    plain = _INNER_APOSTROPHE.sub("", straight(text))
    kept = "".join(c if c.isalnum() or c.isspace() or c in _KEEP else " " for c in plain)
    kept = _LONE_COMMA.sub(" ", kept)
    cleaned = [_case(t) for t in (_clean(raw) for raw in kept.split()) if t]
    return " ".join(_drop_fillers(cleaned))


def l0_key(text: str, *, lang: str, scope: str) -> str:
    """32 hex of SHA-256 over normaliser version, language, scope and normalised text."""
    payload = "\x1f".join((NORMALISER_VERSION, lang.strip().casefold(), scope, normalise(text)))
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _case(token: str) -> str:
    """Case-folded, except file paths and names, whose case names a different file."""
    if "/" in token or "\\" in token or _file_name(token):
        return token
    return straight(token.casefold())


def _file_name(token: str) -> bool:
    stem, dot, ext = token.rstrip(_TRAIL).rpartition(".")
    return bool(dot and stem and ext.casefold() in EXTENSIONS)


def _clean(token: str) -> str:
    previous = None
    while token != previous:
        previous = token
        token = token.rstrip(_TRAIL).lstrip(_LEAD)
        if token.startswith(".") and not (
            len(token) > 1 and (token[1].isalnum() or token[1] in "./")
        ):
            token = token[1:]
        if token.startswith("-") and not (len(token) > 1 and token[1].isalnum()):
            token = token[1:]
    if not any(c.isalnum() for c in token) and token not in _BARE_KEPT:
        return ""
    return token


def _drop_fillers(words: list[str]) -> list[str]:
    changed = True
    while changed:
        changed = False
        for phrase in FILLERS:
            size = len(phrase)
            for i in range(len(words) - size + 1):
                if tuple(words[i : i + size]) == phrase:
                    words = words[:i] + words[i + size :]
                    changed = True
                    break
    return words
