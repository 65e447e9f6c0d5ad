"""The binder's two checks against the recorded request: coverage and polarity (spec §3.6).

Coverage: the entities (numbers, ids, e-mails, paths, dates, ...) that no slot consumed
must be the same, kind and value, in the new request and in the recorded one. An extra
entity means the request asks for more than the template does ("delete task 4 and 5"
against "delete task 4"); a missing one means the template holds a value the request no
longer says. An entity a slot consumed only in part (the 7 of "last 7 days") is compared
by its remaining words ("last # days" is not "last # weeks"). A free-text slot consumes
only the kinds of entity its recorded words held: a `text` slot recorded as "buy milk" does
not take "buy milk tomorrow" or "buy milk on 2026-03-05" (the date would reach the tool as
words of a title, a silent change of what is asked), while one recorded as "pay rent
today" takes "pay rent tomorrow".

Polarity, per clause and per slot (`keel.plans.clauses`): a verb negated in one request
and not the other ("don't cancel"), tied to the verb, not to any "no" token, so a negation
that belongs to a value ("I no longer need it", "not working", "nothing arrived") negates
nothing; another negation cue ("not in /tmp", "except", "without") said in one request
and not the other; a slot negated in one only ("except #W1"); or the marked word of an
antonym pair (`unread`, `disable`, `exclude`, `after`, ...) said in one and not the
other, or each saying a different word of a pair. Words inside slot spans are not read.

Corrections: a request that corrects, retracts or replaces what it asked ("no, wait,
don't", "not this one, order X", "just kidding") is never served (`correction_problem`).

Ids: every id-like entity of the request (an id such as `#W1234567`, an e-mail, a phone
number, an order number) is taken by exactly one slot, and no slot takes two
(`id_problem`); the request is read with lookalike characters made plain first
(`keel.plans.lookalikes`). Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from keel.plans.clauses import correction, free_cues, idiom_words, negated_before, negated_verbs
from keel.plans.entities import find_entities
from keel.plans.entity import Entity
from keel.plans.lexicon import ANTONYMS, ID_NOUNS, tokens

Span = tuple[int, int]
ID_KINDS = frozenset({"id", "email", "phone"})
"""Entity kinds that are ids whatever words stand around them."""


def coverage_problem(
    request: str,
    spans: Sequence[Span],
    source_request: str,
    source_spans: Sequence[Span],
    *,
    texts: Sequence[tuple[Span, Span]] = (),
) -> str:
    """What differs between the unconsumed entities of the two requests ('' when nothing);
    `texts` pairs each free-text slot's span in `request` with its recorded span."""
    for span, source in texts:
        said, held = _kinds_inside(request, span), _kinds_inside(source_request, source)
        if said != held:
            odd = sorted((said - held).elements()) or sorted((held - said).elements())
            return f"free-text slot {request[span[0] : span[1]]!r} differs in {', '.join(odd)}"
    now = Counter(leftover(request, spans))
    then = Counter(leftover(source_request, source_spans))
    if now == then:
        return ""
    extra = sorted((now - then).elements())
    missing = sorted((then - now).elements())
    parts = []
    if extra:
        parts.append("not in the template: " + ", ".join(f"{k} {v}" for k, v in extra))
    if missing:
        parts.append("in the template only: " + ", ".join(f"{k} {v}" for k, v in missing))
    return "; ".join(parts)


def leftover(text: str, spans: Sequence[Span]) -> list[tuple[str, str]]:
    """(kind, value) of each entity of `text` not wholly inside a slot span."""
    out: list[tuple[str, str]] = []
    for entity in find_entities(text):
        core = _core(entity.text, entity.start)
        covering = [s for s in spans if s[0] < entity.end and entity.start < s[1]]
        if not covering:
            out.append((entity.kind, str(entity.value)))
        elif not any(s[0] <= core[0] and core[1] <= s[1] for s in covering):
            out.append((entity.kind, _masked(entity.text, entity.start, covering)))
    return out


def _kinds_inside(text: str, span: Span) -> Counter[str]:
    """The kinds of the entities of `text` that overlap `span`."""
    return Counter(e.kind for e in find_entities(text) if e.start < span[1] and span[0] < e.end)


def _core(text: str, offset: int) -> Span:
    """The span from the first to the last letter or digit (quotes and signs aside)."""
    marks = [i for i, c in enumerate(text) if c.isalnum()]
    if not marks:
        return (offset, offset + len(text))
    return (offset + marks[0], offset + marks[-1] + 1)


def _masked(text: str, offset: int, covering: Sequence[Span]) -> str:
    """`text` with each covered run written as one `#`."""
    out: list[str] = []
    run = False
    for i, char in enumerate(text):
        inside = any(start <= offset + i < end for start, end in covering)
        if inside and not run:
            out.append("#")
        elif not inside:
            out.append(char.casefold())
        run = inside
    return "".join(out)


def polarity_problem(
    request: str,
    spans: Sequence[Span],
    source_request: str,
    source_spans: Sequence[Span],
    *,
    slots: Sequence[tuple[str, Span, Span]] = (),
) -> str:
    """The polarity difference between the two requests ('' when none), judged per clause
    and per slot (`slots`: each slot's name, span in `request` and recorded span)."""
    verbs_now = Counter(negated_verbs(request, spans))
    verbs_then = Counter(negated_verbs(source_request, source_spans))
    if verbs_now != verbs_then:
        odd = sorted(((verbs_now - verbs_then) + (verbs_then - verbs_now)).elements())
        return f"{', '.join(odd)} negated in one request only"
    cues_now = Counter(free_cues(request, spans))
    cues_then = Counter(free_cues(source_request, source_spans))
    if cues_now != cues_then:
        said = sorted((cues_now - cues_then).elements())
        where = "request" if said else "recorded request"
        said = said or sorted((cues_then - cues_now).elements())
        return f"negation {', '.join(said)!s} only in the {where}"
    for name, span, source in slots:
        if negated_before(request, span) != negated_before(source_request, source):
            return f"slot {name} is negated in one request only"
    now, then = _cues(request, spans), _cues(source_request, source_spans)
    for plain, marked in ANTONYMS:
        if (marked in now) != (marked in then):
            return f"{marked!r} in one request only"
        if (plain in now and marked in then) or (marked in now and plain in then):
            if (plain in now) != (plain in then):
                return f"{plain!r} against {marked!r}"
    return ""


def correction_problem(request: str, spans: Sequence[Span] = ()) -> str:
    """What in `request` corrects, retracts or replaces what was asked ('' when nothing):
    such a request is never served, whatever the recorded one said."""
    return correction(request, spans)


def id_problem(request: str, spans: Sequence[Span]) -> str:
    """An id-like entity of `request` (an id, e-mail, phone number, order number) that no
    slot span takes, or that two take, or a slot span that takes two ('' when none)."""
    found = id_entities(request)
    for entity in found:
        core = _core(entity.text, entity.start)
        taking = {s for s in spans if s[0] <= core[0] and core[1] <= s[1]}
        if not taking:
            return f"{entity.kind} {entity.text!r} is in no slot"
        if len(taking) > 1:
            return f"{entity.kind} {entity.text!r} is in two slots"
    for span in set(spans):
        inside = [e.text for e in found if span[0] <= e.start and e.end <= span[1]]
        if len(inside) > 1:
            return f"one slot takes {' and '.join(inside)}"
    return ""


def id_entities(text: str) -> list[Entity]:
    """The id-like entities of `text`: ids, e-mails, phone numbers, and numbers said as
    ids ("order 12", "ticket no. 5", a bare number of six digits or more)."""
    out: list[Entity] = []
    said = tokens(text)
    for entity in find_entities(text):
        if entity.kind in ID_KINDS:
            out.append(entity)
        elif entity.kind == "number" and isinstance(entity.value, int):
            before = [t.norm for t in said if t.end <= entity.start]
            previous = before[-1].rstrip(".") if before else ""
            digits = sum(c.isdigit() for c in entity.text)
            if previous in ID_NOUNS or digits >= 6:
                out.append(entity)
    return out


def words_outside(text: str, spans: Sequence[Span]) -> list[str]:
    """The normalised words of `text` outside `spans`, in order."""
    return [t.norm for t in tokens(text) if not any(s < t.end and t.start < e for s, e in spans)]


def _cues(text: str, spans: Sequence[Span]) -> set[str]:
    """The words of `text` outside `spans`, without those of negation idioms."""
    said = [t for t in tokens(text) if not any(s < t.end and t.start < e for s, e in spans)]
    idioms = idiom_words([t.norm for t in said])
    return {t.norm for i, t in enumerate(said) if i not in idioms}
