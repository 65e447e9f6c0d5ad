"""The model-free lexical intent extractor: a request's ordered (verb, object) clauses.

    IntentExtractor.for_catalog(catalog).extract("find old logs and don't delete them")
      -> find:logs > !delete:logs

Built from the catalog: the verbs are the heads of tool names (`cancel` of `cancel_order`),
the contracts' declared verbs (`call off` -> cancel) and a built-in table of synonym groups
(delete/remove/erase/get rid of, send/email/mail, list/show/find/get/look up, complete/
finish/tick off, enable/turn on/switch on, ...); a word of a group stands for the catalog
verb of that group whose tool takes the clause's object. A split verb surrounds its object
("mark task 4 as done" is complete, "... as not done" reopen, "switch X off" disable). The objects
are the tails of tool names, singular or plural (`orders` -> order), with a few noun groups
(`emails` -> messages, `documents`/`pdfs` -> files). A verb said alone in the request
("delete X" with no delete tool) still makes a clause, so no cached plan drops it.

Clauses come in text order, one per verb ("find X and delete Y" gives two); a verb takes
the first object after it (`it`/`them` right after it stand for a borrowed one), else the
first of these that one of its tools takes (else the first of them): the object of the
next verb it is joined to ("find and delete files"), the previous clauses' ("... and
delete them"), the object said before it ("what mail did I get"), the only object its
tools take. A negation cue in the three words before a verb marks the clause negated.
A word that is a verb and an object (`email`, `order`) is an object while a clause waits
for one; a verb word after a determiner, a question word (`what`, `which`), a possessive
("today's mail") or right after another verb is not a verb ("show my open orders"). Words
inside quotes are never read (a task called "buy milk" asks no purchase). Nothing
recognised: the empty (incomplete) intent.

The verb and object lexicons are built from the catalog.

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
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from keel.plans.catalog import Catalog
from keel.plans.intent import Clause, Intent
from keel.plans.intent_lexicon import IT_CLITICS, object_lexicon, split_verb, verb_lexicon
from keel.plans.intent_words import ENGLISH, ITALIAN, Tongue, by_number, negated, states, words

_PRODUCER_ORDER: Final = ("list", "find", "get", "read", "search", "show", "fetch")
_LONGEST: Final = 5


@dataclass(frozen=True, kw_only=True, slots=True)
class _Mention:
    kind: str
    """`verb` or `object`."""
    start: int
    end: int
    options: tuple[str, ...]
    """Candidate verbs or objects, best first."""


@dataclass(frozen=True, kw_only=True, slots=True)
class IntentExtractor:
    """A lexical extractor for one catalog (build once per catalog, reuse per request)."""

    verbs: Mapping[tuple[str, ...], tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Phrase (words) -> candidate catalog verbs, best first."""
    objects: Mapping[tuple[str, ...], tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Phrase (words) -> candidate objects, best first."""
    pairs: frozenset[tuple[str, str]] = frozenset()
    """(verb, object) of every catalog tool."""
    readers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Object -> verbs of its read-only tools (a bare object is read)."""
    verbs_it: Mapping[tuple[str, ...], tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Italian phrase -> candidate catalog verbs (read when the request's `lang` is `it`)."""
    objects_it: Mapping[tuple[str, ...], tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Italian and English phrase -> candidate objects (for `lang` `it`)."""

    @classmethod
    def for_catalog(
        cls, catalog: Catalog, synonyms: Mapping[str, Sequence[str]] | None = None
    ) -> IntentExtractor:
        """The extractor for `catalog`; `synonyms` adds verb groups (canonical -> words)."""
        readers: dict[str, list[str]] = {}
        for tool in catalog.values():
            if not tool.contract.effectful and "_" in tool.name:
                readers.setdefault(tool.object, []).append(tool.verb)
        return cls(
            verbs=MappingProxyType(verb_lexicon(catalog, synonyms or {})),
            objects=MappingProxyType(object_lexicon(catalog)),
            verbs_it=MappingProxyType(verb_lexicon(catalog, synonyms or {}, lang="it")),
            objects_it=MappingProxyType(object_lexicon(catalog, lang="it")),
            pairs=frozenset((t.verb, t.object) for t in catalog.values() if "_" in t.name),
            readers=MappingProxyType({o: _by_producer(v) for o, v in readers.items()}),
        )

    def extract(self, text: str, *, lang: str = "en") -> Intent:
        """The clauses of `text`, in order; the empty intent when none is recognised.
        `lang` (`it`, `it-IT`: Italian; anything else: English) picks the word tables."""
        italian = lang.strip().casefold().split("-")[0].split("_")[0] == "it"
        tongue = ITALIAN if italian else ENGLISH
        said, owners = words(text, italian=italian)
        mentions = self._mentions(said, owners, tongue)
        verbs = [m for m in mentions if m.kind == "verb"]
        if not verbs:
            return self._bare_object(said, mentions, tongue)
        clauses: list[Clause] = []
        objects: list[tuple[str, ...]] = [self._object_after(v, mentions) for v in verbs]
        for i, verb in enumerate(verbs):
            options = objects[i] or self._borrowed(i, verbs, objects, said, mentions, tongue)
            name, obj = self._resolve(verb.options, options)
            clauses.append(Clause(verb=name, object=obj, negated=negated(said, verb.start, tongue)))
        return Intent(clauses=tuple(clauses))

    # --- reading ------------------------------------------------------------------------

    def _mentions(self, said: list[str], owners: frozenset[int], tongue: Tongue) -> list[_Mention]:
        italian = tongue is ITALIAN
        verbs = self.verbs_it if italian else self.verbs
        objects = self.objects_it if italian else self.objects
        out: list[_Mention] = []
        particles: set[int] = set()  # the "done" of "mark task 4 as done": read already
        i = 0
        while i < len(said):
            if i in particles:
                i += 1
                continue
            split = split_verb(said, i)
            verb = (1, self.verbs[(split[0],)]) if split else _longest(verbs, said, i)
            obj = _longest(objects, said, i)
            if verb and obj and self._wants_object(out):
                verb = None
            if verb and i and (said[i - 1] in tongue.not_before_verb or i - 1 in owners):
                verb = None
            if verb and out and out[-1].kind == "verb" and out[-1].end == i:
                verb = None if not (italian and said[i - 1] in IT_CLITICS) else verb
            if verb is not None:
                out.append(_Mention(kind="verb", start=i, end=i + verb[0], options=verb[1]))
                particles |= {split[1]} if split else set()
                i += verb[0]
            elif obj is not None:
                options = by_number(obj[1], said[i - 1] if italian and i else "")
                out.append(_Mention(kind="object", start=i, end=i + obj[0], options=options))
                i += obj[0]
            elif said[i] in tongue.pronouns and out and out[-1].kind == "verb" and out[-1].end == i:
                out.append(_Mention(kind="object", start=i, end=i + 1, options=()))
                i += 1
            else:
                i += 1
        return out

    @staticmethod
    def _wants_object(mentions: list[_Mention]) -> bool:
        return bool(mentions) and mentions[-1].kind == "verb"

    @staticmethod
    def _object_after(verb: _Mention, mentions: list[_Mention]) -> tuple[str, ...]:
        for mention in mentions:
            if mention.start < verb.end:
                continue
            if mention.kind == "verb":
                return ()
            return mention.options
        return ()

    def _borrowed(
        self,
        i: int,
        verbs: list[_Mention],
        objects: list[tuple[str, ...]],
        said: list[str],
        mentions: list[_Mention],
        tongue: Tongue,
    ) -> tuple[str, ...]:
        """The object a verb said without one takes: the first of (the next verb's when
        only separators stand between, the previous clauses', the object said before it,
        the only object its tools take) that one of its tools takes, else the first."""
        found: list[tuple[str, ...]] = []
        if i + 1 < len(verbs) and objects[i + 1]:
            between = said[verbs[i].end : verbs[i + 1].start]
            if all(w in tongue.separators for w in between):
                found.append(objects[i + 1])
        found += [objects[j] for j in range(i - 1, -1, -1) if objects[j]]
        before = [m for m in mentions if m.kind == "object" and m.end <= verbs[i].start]
        if before and before[-1].options:
            found.append(before[-1].options)  # "what mail did I get"
        sole = sorted({o for v in verbs[i].options for (tv, o) in self.pairs if tv == v})
        if len(sole) == 1:
            found.append(tuple(sole))
        for options in found:
            if any((v, o) in self.pairs for v in verbs[i].options for o in options):
                return options
        return found[0] if found else ()

    def _resolve(self, verbs: tuple[str, ...], objects: tuple[str, ...]) -> tuple[str, str]:
        for verb in verbs:
            for obj in objects:
                if (verb, obj) in self.pairs:
                    return verb, obj
        return verbs[0], objects[0] if objects else ""

    def _bare_object(self, said: list[str], mentions: list[_Mention], tongue: Tongue) -> Intent:
        """A request naming only an object after question words ("what orders do I
        have?", "my open orders") reads it; an unknown word before it may be a verb the
        lexicon lacks, so nothing is assumed then."""
        for mention in mentions[:1]:
            if not all(w in tongue.question_words for w in said[: mention.start]):
                return Intent()
            # "task 4 is done" states something about the task (a state change the
            # lexicon may not know as a verb); "is task 4 done?" asks, and reads it.
            if states(said[mention.end :]):
                return Intent()
            for obj in mention.options:
                verbs = self.readers.get(obj)
                if verbs:
                    return Intent(clauses=(Clause(verb=verbs[0], object=obj),))
        return Intent()


def _longest(
    lexicon: Mapping[tuple[str, ...], tuple[str, ...]], said: list[str], i: int
) -> tuple[int, tuple[str, ...]] | None:
    for size in range(_LONGEST, 0, -1):
        options = lexicon.get(tuple(said[i : i + size]))
        if options and i + size <= len(said):
            return size, options
    return None


def _by_producer(verbs: list[str]) -> tuple[str, ...]:
    def rank(verb: str) -> tuple[int, str]:
        order = _PRODUCER_ORDER.index(verb) if verb in _PRODUCER_ORDER else len(_PRODUCER_ORDER)
        return order, verb

    return tuple(sorted(set(verbs), key=rank))
