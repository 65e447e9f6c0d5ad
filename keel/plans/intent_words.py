"""The words of a request as the intent extractor (`keel.plans.intents`) reads them.

* `words`: the normalised words of a request, each word inside quotes replaced by a
  placeholder (a task called "buy milk" asks no purchase), with the indices of possessives
  ("today's mail": a noun follows, not a verb; `what's` is "what is"); Italian splits an
  elided article off its noun (`l'ordine` -> `l`, `ordine`) and has no possessives.
* `Tongue`: the function words of one language (`ENGLISH`, `ITALIAN`): words after which a
  verb word is a noun, separators, question words, object pronouns.
* `states`: whether the words after an object make a statement (`task 4 is done`).
* `negated`: whether a negation cue stands in the three words before a verb.
* `by_number`: Italian, the object options whose number the article says first.

Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from keel.plans.entities import find_entities
from keel.plans.lexicon import (
    DETERMINERS,
    IT_DETERMINERS,
    IT_ELIDED,
    IT_SEPARATORS,
    SEPARATORS,
    VERB_NEGATIONS,
    singular,
    tokens,
)

NEG_WINDOW: Final = 3
"""How many words before a verb a negation cue may stand."""
_QUOTED: Final = "\x00"
"""Stands for each word inside quotes: a title such as "buy milk" says no verb."""
_POSSESSIVE: Final = re.compile(r"\w['\u2019]s$")
_IS_CONTRACTED: Final = frozenset(
    {"it", "that", "what", "there", "here", "who", "where", "how", "he", "she", "let"}
)
"""`what's` is "what is", not a possessive."""
_QUESTION_WORDS: Final = DETERMINERS | {
    *("what", "which", "any", "how", "many", "much", "do", "does", "did", "i", "we", "have"),
    *("are", "is", "there", "me", "of", "open", "current", "recent", "latest", "new", "old"),
    *("where", "whats", "who", "hey", "hi", "so", "ok", "okay", "and", "still", "pending"),
}
_IT_PLURAL: Final = frozenset(
    {"i", "gli", "le", "quali", "miei", "mie", "tuoi", "tue", "suoi", "sue", "nostri", "nostre"}
    | {"questi", "queste", "quei", "quegli", "quelle", "tutti", "tutte", "alcuni", "alcune"}
    | {"dei", "degli", "delle", "ai", "agli", "alle", "dai", "dagli", "dalle", "nei", "negli"}
    | {"nelle", "sui", "sugli", "sulle", "quanti", "quante"}
)
"""Italian words before a plural noun: `i file` are files, `il file` one file."""
_IT_SINGULAR: Final = frozenset({"il", "lo", "la", "l", "un", "uno", "una", "quale"})
_IT_QUESTION_WORDS: Final = IT_DETERMINERS | {
    *("che", "cosa", "quale", "quali", "quanto", "quanta", "ho", "hai", "abbiamo", "ci", "c"),
    *("è", "sono", "mi", "di", "in", "a", "da", "per", "ancora", "aperti", "aperte", "aperto"),
    *("nuovi", "nuove", "recenti", "ultimi", "ultime", "vecchi", "dove", "ciao", "ok", "e"),
    *("dettagli", "stato", "elenco", "lista", "sospeso", "sospesi", "in", "corso"),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Tongue:
    """The function words of one language."""

    not_before_verb: frozenset[str]
    """After one of these a verb word is a noun ("the order", "le email")."""
    separators: frozenset[str]
    question_words: frozenset[str]
    pronouns: frozenset[str]
    """After a verb, its object is the previous clause's ("find the PDFs and delete them");
    Italian glues them to the verb (`eliminali`)."""


ENGLISH: Final = Tongue(
    not_before_verb=DETERMINERS | {"what", "which", "whose"},
    separators=SEPARATORS,
    question_words=_QUESTION_WORDS,
    pronouns=frozenset({"it", "them"}),
)
ITALIAN: Final = Tongue(
    not_before_verb=IT_DETERMINERS | {"che", "quale", "quali", "cui", "è", "sono", "era", "sia"},
    separators=IT_SEPARATORS,
    question_words=_IT_QUESTION_WORDS,
    pronouns=frozenset(),
)


_COPULAS: Final = frozenset({"is", "are", "was", "were", "è", "sono", "era", "erano"})


def states(after: list[str]) -> bool:
    """The words after an object make a statement: a copula followed by a word that is not
    a value (`is done`, `are closed`, `è fatto`)."""
    for index, word in enumerate(after[:-1]):
        if word in _COPULAS and not any(c.isdigit() for c in after[index + 1]):
            return True
    return False


def words(text: str, *, italian: bool = False) -> tuple[list[str], frozenset[int]]:
    """The normalised words of `text` (each word inside quotes replaced by `_QUOTED`) and
    the indices of possessives ("today's mail": a noun follows, not a verb). Italian:
    an elided article is a word of its own (`l'ordine` -> `l`, `ordine`), no possessives."""
    quoted = [(e.start, e.end) for e in find_entities(text) if e.kind == "quoted"]
    said = tokens(text)
    norms = [
        _QUOTED if any(s <= t.start and t.end <= e for s, e in quoted) else t.norm for t in said
    ]
    if italian:
        return _split_elided(norms, [t.text for t in said]), frozenset()
    owners = frozenset(
        i
        for i, t in enumerate(said)
        if _POSSESSIVE.search(t.text) and t.norm[:-1] not in _IS_CONTRACTED
    )
    return norms, owners


def by_number(options: tuple[str, ...], before: str) -> tuple[str, ...]:
    """Italian: the options whose number the word before says first (`i file`: files)."""
    if before not in _IT_PLURAL and before not in _IT_SINGULAR:
        return options
    want_plural = before in _IT_PLURAL

    def plural_tail(tail: str) -> bool:
        last = tail.rsplit("_", 1)[-1]
        return singular(last) != last

    return tuple(sorted(options, key=lambda o: plural_tail(o) != want_plural))


def _split_elided(norms: list[str], texts: list[str]) -> list[str]:
    out: list[str] = []
    for word, text in zip(norms, texts, strict=True):
        elided = IT_ELIDED.match(text) if word != _QUOTED else None
        if elided:
            out += [elided.group(1).casefold(), word[len(elided.group(1)) :]]
        else:
            out.append(word)
    return out


def negated(said: list[str], start: int, tongue: Tongue) -> bool:
    """Whether a negation cue stands in the `NEG_WINDOW` words before the verb at `start`
    (a separator ends the search: "don't find X and delete Y" negates only `find`)."""
    window = said[max(0, start - NEG_WINDOW) : start]
    for word in reversed(window):
        if word in VERB_NEGATIONS:
            return True
        if word in tongue.separators:
            return False
    return False
