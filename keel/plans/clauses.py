"""A request's clauses and their polarity, for the binder's checks (plan-cache spec §3.6).

    clauses("cancel #W1, I no longer need it -- no, wait, don't")
      -> "cancel #W1" | "I no longer need it" | "no" | "wait" | "don't"

A request is split into clauses at sentence punctuation (`, ; . ! ? :` before white space
or the end), at dashes standing alone (`-`, `--`, en and em dashes), at ellipses and at the words
that join clauses (`and`, `but`, `then`, `e`, `ma`, `poi`, ...). Then, per clause:

* `negated`: the verbs (their synonym group's name: `remove` is `delete`) that a negation
  cue in the three words before them negates ("don't cancel it", "I do not want to
  cancel"). Negation is tied to a verb: a cue before no verb of the clause negates nothing
  of the request ("no longer needed", "it is not working", "nothing arrived" say why);
* `cues`: the other negation cues ("files not in /tmp", "all but the PDFs"), without the
  negations that belong to a value (`keel.plans.lexicon.NEGATION_IDIOMS`).

`correction(text)` says whether the request corrects, retracts or replaces what it (or
the turn before it) said: a correction marker ("no, wait", "actually", "not this one",
"just kidding", "sorry, I meant", "scratch that", "instead", "anzi", "invece", ...), a
clause that is a bare negation ("don't", "do not", "no"), or a later clause that negates a
verb an earlier one asked for ("cancel it ... don't cancel it"). Words inside the given
spans (slot values) are not read. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from keel.plans.intent_lexicon import IT_VERBS, VERB_GROUPS
from keel.plans.lexicon import (
    CORRECTIONS,
    IT_SEPARATORS,
    LONE_CORRECTIONS,
    NEGATION_IDIOMS,
    NEGATIONS,
    SEPARATORS,
    VERB_NEGATIONS,
    Token,
    tokens,
)

Span = tuple[int, int]

NEG_WINDOW: Final = 3
"""How many words before a verb a negation cue may stand."""
_BREAK: Final = re.compile(
    r"[,;.!?:](?=\s|$)|\s[-\u2013\u2014]{1,2}(?=\s|$)|[\u2013\u2014]|\.\.\.|…"
)
_JOINERS: Final = (SEPARATORS | IT_SEPARATORS) - {"after", "dopo", "o", "or"}
_FUNCTION: Final = frozenset(
    {"do", "does", "did", "it", "that", "this", "them", "one", "please", "oh", "ok", "okay"}
    | {"i", "you", "we", "just", "really", "then", "so", "well", "the", "a", "to", "lo"}
    | {"la", "li", "le", "farlo", "fare", "per", "favore", "ti", "prego", "sorry", "scusa"}
)
"""Words that leave a clause of negations a bare negation ("please don't do it")."""


def _verb_words() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in VERB_GROUPS:
        for phrase in group:
            if " " not in phrase:
                out.setdefault(phrase, group[0])
        for form in IT_VERBS.get(group[0], ()):
            if " " not in form:
                out.setdefault(form, group[0])
    return out


VERBS: Final = _verb_words()
"""Action verb word -> its synonym group's name (English and Italian forms)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Clause:
    """One clause of a request: its tokens (slot words left out) and its polarity."""

    start: int
    end: int
    words: tuple[str, ...]
    """The normalised words read (outside slot spans)."""
    verbs: tuple[str, ...]
    """The action verbs said, by group name, in order."""
    negated: frozenset[str]
    """The verbs a negation cue negates."""
    cues: tuple[str, ...]
    """Negation cues negating no verb and not part of a value's idiom."""


def clauses(text: str, spans: Sequence[Span] = ()) -> list[Clause]:
    """The clauses of `text`, in order (words inside `spans` are not read)."""
    cuts = [m.start() for m in _BREAK.finditer(text)]
    out: list[Clause] = []
    group: list[Token] = []
    for token in tokens(text):
        skipped = not token.norm.strip("-\u2013\u2014") or token.norm in _JOINERS
        if group and (skipped or any(group[-1].end <= c < token.start for c in cuts)):
            out.append(_clause(group, spans))
            group = []
        if not skipped:
            group.append(token)
    if group:
        out.append(_clause(group, spans))
    return out


def _clause(group: list[Token], spans: Sequence[Span]) -> Clause:
    read = [t for t in group if not any(s < t.end and t.start < e for s, e in spans)]
    norms = [t.norm for t in read]
    used: set[int] = set()
    verbs: list[str] = []
    negated: set[str] = set()
    for i, word in enumerate(norms):
        verb = VERBS.get(word)
        if verb is None:
            continue
        verbs.append(verb)
        for j in range(i - 1, max(-1, i - 1 - NEG_WINDOW), -1):
            if norms[j] in VERB_NEGATIONS:
                negated.add(verb)
                used.add(j)
                break
    used |= idiom_words(norms)
    cues = tuple(w for i, w in enumerate(norms) if w in NEGATIONS and i not in used)
    return Clause(
        start=group[0].start,
        end=group[-1].end,
        words=tuple(norms),
        verbs=tuple(verbs),
        negated=frozenset(negated),
        cues=cues,
    )


def idiom_words(norms: Sequence[str]) -> set[int]:
    """Indices of the words of negation idioms ("no longer", "not working")."""
    out: set[int] = set()
    for idiom in NEGATION_IDIOMS:
        size = len(idiom)
        for i in range(len(norms) - size + 1):
            if tuple(norms[i : i + size]) == idiom:
                out.update(range(i, i + size))
    return out


def correction(text: str, spans: Sequence[Span] = ()) -> str:
    """What in `text` corrects, retracts or replaces what was asked ('' when nothing)."""
    parts = clauses(text, spans)
    marker = _marker([w for clause in parts for w in clause.words])
    if marker:
        return f"{marker!r}"
    for clause in parts:
        if _bare_negation(clause):
            return f"{' '.join(clause.words)!r} negates what was asked"
    asked: set[str] = set()
    for clause in parts:
        undone = clause.negated & asked
        if undone:
            return f"a later clause negates {', '.join(sorted(undone))}"
        asked |= set(clause.verbs) - clause.negated
    return ""


def _marker(words: Sequence[str]) -> str:
    for phrase in CORRECTIONS:
        size = len(phrase)
        for i in range(len(words) - size + 1):
            if tuple(words[i : i + size]) == phrase:
                return " ".join(phrase)
    return ""


def _bare_negation(clause: Clause) -> bool:
    """A clause of negations with no verb of its own: "don't", "please do not", "no"."""
    words = clause.words
    if not words or clause.verbs:
        return False
    if len(words) == 1 and words[0] in LONE_CORRECTIONS:
        return True
    negations = [w for w in words if w in NEGATIONS]
    return bool(negations) and all(w in NEGATIONS or w in _FUNCTION for w in words)


def negated_verbs(text: str, spans: Sequence[Span] = ()) -> list[str]:
    """Every negated verb of `text`, clause by clause (sorted within a clause)."""
    return [verb for clause in clauses(text, spans) for verb in sorted(clause.negated)]


def free_cues(text: str, spans: Sequence[Span] = ()) -> list[str]:
    """The negation cues of `text` that negate no verb and belong to no idiom."""
    return [cue for clause in clauses(text, spans) for cue in clause.cues]


def negated_before(text: str, span: Span) -> bool:
    """Whether a negation cue stands in the words just before `span`, in its clause
    ("cancel everything except #W1", "not in /tmp")."""
    for clause in clauses(text):
        if not (clause.start <= span[0] < clause.end + 1):
            continue
        norms = [t.norm for t in tokens(text[clause.start : span[0]])]
        idioms = idiom_words(norms)
        window = range(max(0, len(norms) - NEG_WINDOW), len(norms))
        return any(norms[i] in NEGATIONS and i not in idioms for i in window)
    return False
