"""The verb and object lexicons of the lexical intent extractor, built from a catalog.

Verbs: every tool-name head stands for itself; a contract's declared verbs (`call off`)
stand for the head of their tool; every word of a built-in synonym group (plus the groups
a caller adds) stands for the catalog verbs of its group, or for the group's first word
when the catalog has none (a verb the catalog cannot do still makes a clause, so a cached
plan that skips it is not served). Objects: the tail of each tool name (`files_spreadsheet`
-> "files spreadsheet") as written first, then singular or plural, then each of its words
and their noun-group mates as weaker aliases (`emails` for `messages`, `documents` and
`pdfs` for `files`; images stay images). Split verbs: a head, a few words, then a
particle ("mark task 4 as done" is complete, "mark it as not done" is reopen, "switch
notifications off" is disable, "tick task 4 off" is complete), read by `split_verb`. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from keel.plans.catalog import Catalog
from keel.plans.lexicon import (
    OBJECT_SYNONYMS,
    PLURAL_TYPES,
    SEPARATORS,
    VERB_NEGATIONS,
    inflections,
    plural,
    singular,
    words,
)

Lexicon = dict[tuple[str, ...], tuple[str, ...]]

VERB_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("delete", "remove", "erase", "trash", "destroy", "get rid of", "wipe", "purge", "discard"),
    ("complete", "finish", "tick off", "check off", "cross off"),
    ("reopen", "re-open"),
    ("cancel", "call off", "abort", "revoke"),
    ("send", "email", "mail", "dispatch"),
    (
        *("list", "show", "find", "get", "search", "search for", "look up", "look for"),
        *("lookup", "fetch", "display", "retrieve", "locate", "check"),
    ),
    ("read", "open", "view"),
    ("create", "make", "add"),
    ("update", "change", "modify", "edit"),
    ("move", "relocate"),
    ("copy", "duplicate"),
    ("rename",),
    ("write", "save"),
    ("archive",),
    ("share",),
    ("install",),
    ("uninstall",),
    ("count", "how many", "number of"),
    ("summarize", "summarise", "sum up", "a summary of", "give me a summary of"),
    ("schedule", "book"),
    ("enable", "turn on", "activate", "switch on"),
    ("disable", "turn off", "deactivate", "switch off"),
    ("reply", "respond", "answer"),
    ("forward",),
    ("download",),
    ("upload",),
    ("restore", "recover", "undelete"),
    ("compress", "zip"),
    ("extract", "unzip"),
    ("approve", "accept"),
    ("reject", "decline"),
    ("sort", "order by"),
    ("filter",),
    ("translate",),
    ("print",),
    ("play",),
    ("pay",),
    ("refund", "reimburse", "give a refund", "issue a refund", "process a refund"),
    ("buy", "purchase"),
    ("return",),
    ("exchange", "swap"),
    ("remind", "remind me"),
)
"""Built-in synonym groups, the group's usual name first. Groups never mix operations
(archive is not delete, cancel is not delete)."""

SPLIT_VERBS: Final[tuple[tuple[frozenset[str], frozenset[str], str, bool], ...]] = (
    (frozenset({"mark"}), frozenset({"done", "complete", "completed", "finished"}),
     "complete", False),
    (frozenset({"mark"}), frozenset({"undone", "incomplete", "unfinished", "open"}),
     "reopen", False),
    (frozenset({"tick", "check", "cross"}), frozenset({"off"}), "complete", True),
    (frozenset({"turn", "switch"}), frozenset({"on"}), "enable", True),
    (frozenset({"turn", "switch"}), frozenset({"off"}), "disable", True),
)  # fmt: skip
"""(heads, particles, verb group, particle ends the clause): a verb said around its object.
A negation right before a `mark` particle swaps complete and reopen ("as not done")."""
_SPLIT_GAP: Final = 6
_CLAUSE_END: Final = SEPARATORS | {"please", "now", "again", "for", "too"}
_SWAPPED: Final = {"complete": "reopen", "reopen": "complete"}

_STOP_PARTS: Final = frozenset(
    {"by", "to", "of", "in", "on", "for", "all", "new", "and", "from", "with", "the", "a", "my"}
)


def verb_lexicon(catalog: Catalog, synonyms: Mapping[str, Sequence[str]]) -> Lexicon:
    """Phrase -> candidate verbs (catalog heads first)."""
    heads = sorted({t.verb for t in catalog.values()})
    out: dict[tuple[str, ...], list[str]] = {}
    for head in heads:
        _add(out, head, head)
    for tool in catalog.values():
        for phrase in tool.contract.verbs:
            _add(out, phrase, tool.verb)
    groups = [*VERB_GROUPS, *((canon, *more) for canon, more in synonyms.items())]
    for group in groups:
        targets = [w for w in group if w in heads] or [group[0]]
        for phrase in group:
            for target in targets:
                _add(out, phrase, target)
    return {k: tuple(v) for k, v in out.items()}


def object_lexicon(catalog: Catalog) -> Lexicon:
    """Phrase -> candidate objects (whole tool-name tails first, then aliases)."""
    out: dict[tuple[str, ...], list[str]] = {}
    tails = sorted({t.object for t in catalog.values() if "_" in t.name})
    for tail in tails:
        _add(out, tail.replace("_", " "), tail)
    for tail in tails:
        parts = tail.split("_")
        for last in sorted(inflections(parts[-1])):
            _add(out, " ".join([*parts[:-1], last]), tail)
    for tail in tails:
        for part in tail.split("_"):
            if len(part) < 3 or part in _STOP_PARTS:
                continue
            for alias in _aliases(part):
                _add(out, alias, tail)
    return {k: tuple(v) for k, v in out.items()}


def _aliases(part: str) -> set[str]:
    base = singular(part)
    names = {base}
    for group in OBJECT_SYNONYMS:
        if base in group:
            names |= group
    if base == "file":
        names |= PLURAL_TYPES  # "PDFs": the glob entity keeps the type apart
    return {form for name in names for form in (*inflections(name), plural(name))}


def _add(out: dict[tuple[str, ...], list[str]], phrase: str, target: str) -> None:
    key = tuple(words(phrase))
    if not key:
        return
    found = out.setdefault(key, [])
    if target not in found:
        found.append(target)


def split_verb(said: Sequence[str], i: int) -> tuple[str, int] | None:
    """(verb group, index of the particle) when `said[i]` opens a split verb."""
    for heads, particles, verb, at_end in SPLIT_VERBS:
        if said[i] not in heads:
            continue
        for j in range(i + 1, min(len(said), i + 2 + _SPLIT_GAP)):
            if said[j] in SEPARATORS:
                break
            if said[j] not in particles:
                continue
            if at_end and j + 1 < len(said) and said[j + 1] not in _CLAUSE_END:
                continue
            negated = said[j - 1] in VERB_NEGATIONS
            if negated and verb not in _SWAPPED:
                break
            return (_SWAPPED[verb] if negated else verb), j
    return None
