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

Polarity: a negation ("not", "don't", "without", "except", ...) said in one request and
not the other, or the marked word of an antonym pair (`unread`, `disable`, `exclude`,
`after`, ...) said in one and not the other, or each saying a different word of a pair.
Words inside slot spans are not read. Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from keel.plans.entities import find_entities
from keel.plans.lexicon import ANTONYMS, NEGATIONS, tokens

Span = tuple[int, int]


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
    request: str, spans: Sequence[Span], source_request: str, source_spans: Sequence[Span]
) -> str:
    """The polarity cue said in one request and not the other ('' when none)."""
    now, then = _cues(request, spans), _cues(source_request, source_spans)
    negated_now, negated_then = bool(now & NEGATIONS), bool(then & NEGATIONS)
    if negated_now != negated_then:
        said = sorted((now if negated_now else then) & NEGATIONS)
        where = "request" if negated_now else "recorded request"
        return f"negation {', '.join(said)!s} only in the {where}"
    for plain, marked in ANTONYMS:
        if (marked in now) != (marked in then):
            return f"{marked!r} in one request only"
        if (plain in now and marked in then) or (marked in now and plain in then):
            if (plain in now) != (plain in then):
                return f"{plain!r} against {marked!r}"
    return ""


def _cues(text: str, spans: Sequence[Span]) -> set[str]:
    return {
        t.norm
        for t in tokens(text)
        if not any(start < t.end and t.start < end for start, end in spans)
    }
