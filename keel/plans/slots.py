"""Span alignment and the slot binder (plan-cache spec §3.6): a template's slots from a request.

At record time `align(value, request)` finds the span of the request an argument value
came from, through typed normalisers (`2024-05-17` is "May 17, 2024", `*.pdf` is "PDFs",
`40` is "#40", 5 is "five") or, for plain words, a case-insensitive token match ("task 4"
is never inside "task 40"). The slot type records the entity kind and how the value was
written, so the binder gives the next request's value in the same form:

    number      5 (int/float)          number:str  "5"
    id          "#40" as said          id:bare "40"     id:int 40
    email       lower-case             date  ISO     time  HH:MM     time_window "last week"
    path, url, glob, quoted            <kind>:text  the span as written
    text        the span as written    text:lower  case-folded
    enum:a|b    the enum value said    name:<list> a name of the gazetteer <list>

At serve time `bind(slots, request, source_request=...)` takes every slot from the request:
exactly one span per required slot (several of the slot's kind are told apart by the
words around the slot in the recorded request); then two checks against the recorded
request: coverage (the entities no slot consumed must be the same in both, so "delete
task 4 and 5" is not served by the plan of "delete task 4"; a free-text slot takes only
the kinds of entity its recorded words held: "buy milk" not "buy milk tomorrow") and
polarity (a negation or a marked antonym said in one and not the other). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from keel.extract.extractors import Ambiguous, Found, enum, gazetteer
from keel.plans.anchors import anchored_text, context_score, locate, span_tokens
from keel.plans.bind_checks import (
    correction_problem,
    coverage_problem,
    id_problem,
    polarity_problem,
)
from keel.plans.entities import classify, find_entities
from keel.plans.entity import Entity
from keel.plans.lexicon import Token, tokens
from keel.plans.lookalikes import plain
from keel.plans.plan import Slot

BindReason = Literal[
    "binder_missing_slot",
    "binder_ambiguous",
    "correction",
    "binder_coverage",
    "binder_ids",
    "polarity",
]
TYPED_KINDS = frozenset(
    {"number", "id", "email", "phone", "url", "path", "glob", "date", "time", "time_window"}
    | {"quoted"}
)


@dataclass(frozen=True, kw_only=True, slots=True)
class SlotMatch:
    """Where a value sits in a request."""

    type: str
    """The slot type (see the module docstring)."""
    value: object
    """The value that was aligned, unchanged."""
    start: int
    end: int
    text: str
    """The request's text of the span."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Bound:
    """Every slot bound: values in the form the tools got them, and their request spans."""

    values: Mapping[str, object]
    spans: Mapping[str, tuple[int, int]]
    """Each slot's span in the request as the binder read it (`lookalikes.plain`)."""
    source_spans: tuple[tuple[int, int], ...] = ()
    """The recorded slots' spans in the recorded request (read the same way)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class BindMiss:
    """The template does not fit the request."""

    reason: BindReason
    detail: str


def candidates(text: str) -> list[Entity]:
    """The entities of `text` and the numbers inside them, in text order."""
    out: list[Entity] = []
    for entity in find_entities(text):
        out.append(entity)
        out.extend(entity.parts)
    return out


def align(value: object, request: str) -> SlotMatch | None:
    """The request span `value` came from, or None when the request does not say it."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _align_number(value, request)
    if not isinstance(value, str) or not value.strip():
        return None
    typed = classify(value)
    if typed is not None:
        return _align_typed(value, typed, request)
    for entity in find_entities(request):
        if entity.kind == "quoted" and entity.value == value:
            return _match("quoted", value, entity)
    return _align_text(value, request)


def _match(kind: str, value: object, entity: Entity) -> SlotMatch:
    return SlotMatch(type=kind, value=value, start=entity.start, end=entity.end, text=entity.text)


def _align_number(value: float, request: str) -> SlotMatch | None:
    for entity in candidates(request):
        if entity.kind == "number" and entity.value == value:
            return _match("number", value, entity)
        if (
            entity.kind == "id"
            and _bare(entity.text).isdigit()
            and int(_bare(entity.text)) == value
        ):
            return _match("id:int", value, entity)
    return None


def _align_typed(value: str, typed: Entity, request: str) -> SlotMatch | None:
    for entity in candidates(request):
        if typed.kind == "number" and entity.kind == "id" and _bare(entity.text) == value.strip():
            return _match("id:bare", value, entity)
        if typed.kind == "id" == entity.kind and value != entity.text:
            if not value.startswith("#") and entity.text == "#" + value:
                return _match("id:bare", value, entity)  # said `#W1`, the tool got `W1`
            if value == "#" + entity.text:
                return _match("id:hash", value, entity)  # said `W1`, the tool got `#W1`
        if entity.kind != typed.kind or not _same(typed, entity):
            continue
        if value == entity.value or (typed.kind == "id" and value == entity.text):
            return _match(typed.kind, value, entity)
        if typed.kind == "date" and value in entity.alts:
            return _match("date:alt", value, entity)
        if typed.kind == "number":
            return _match("number:str", value, entity)
        if value == entity.text:
            return _match(f"{typed.kind}:text", value, entity)
    return None


def _same(a: Entity, b: Entity) -> bool:
    if a.kind == "path":
        return a.value == b.value
    return a.value == b.value or a.value in b.alts or b.value in a.alts


def _align_text(value: str, request: str) -> SlotMatch | None:
    found = occurrences(value, request)
    if not found:
        return None
    start, end = found[0]
    text = request[start:end]
    kind = "text:lower" if value != text and value == text.casefold() else "text"
    return SlotMatch(type=kind, value=value, start=start, end=end, text=text)


def occurrences(needle: str, text: str) -> list[tuple[int, int]]:
    """Every character span of `text` whose tokens are `needle`'s (case-insensitive, except
    in paths), on token boundaries, left to right and not overlapping."""
    wanted = [_key(t) for t in tokens(needle)]
    said = tokens(text)
    size = len(wanted)
    out: list[tuple[int, int]] = []
    i = 0
    while size and i <= len(said) - size:
        if [_key(t) for t in said[i : i + size]] == wanted:
            out.append((said[i].start, said[i + size - 1].end))
            i += size
        else:
            i += 1
    return out


def _key(token: Token) -> str:
    """Path-like tokens compare with their case (`/tmp/A` is not `/tmp/a`)."""
    path_like = "/" in token.text or "\\" in token.text
    return token.text if path_like else token.norm


def _bare(text: str) -> str:
    return text[1:] if text.startswith("#") else text


# --- binding -------------------------------------------------------------------------------


def bind(
    slots: Mapping[str, Slot],
    request: str,
    *,
    source_request: str,
    coverage: bool = True,
    polarity: bool = True,
    gazetteers: Mapping[str, Sequence[str]] | None = None,
) -> Bound | BindMiss:
    """Every slot's value from `request`, or why the template does not fit it. Both
    requests are read with lookalike characters made plain (`keel.plans.lookalikes`)."""
    request, source_request = plain(request), plain(source_request)
    if polarity and (problem := correction_problem(request)):
        return BindMiss(reason="correction", detail=problem)
    said, recorded = tokens(request), tokens(source_request)
    sources = {n: locate(plain(s.source or ""), recorded) for n, s in slots.items()}
    values: dict[str, object] = {}
    spans: dict[str, tuple[int, int]] = {}
    for name, slot in slots.items():
        others = [r for n, r in sources.items() if n != name and r is not None]
        got = _bind_one(slot, request, said, recorded, sources[name], others, gazetteers or {})
        if isinstance(got, BindMiss):
            if slot.required:
                return BindMiss(reason=got.reason, detail=f"{name}: {got.detail}")
            continue
        values[name], spans[name] = got
    clash = _clash(spans, sources)
    if clash:
        return BindMiss(reason="binder_ambiguous", detail=clash)
    taken_spans = list(spans.values())
    recorded_spans = [span_tokens(r, recorded) for r in sources.values() if r is not None]
    if coverage:
        texts = [
            (spans[n], span_tokens(r, recorded))
            for n, r in sources.items()
            if n in spans and r is not None and slots[n].type.startswith("text")
        ]
        problem = coverage_problem(
            request, taken_spans, source_request, recorded_spans, texts=texts
        )
        if problem:
            return BindMiss(reason="binder_coverage", detail=problem)
        if problem := id_problem(request, taken_spans):
            return BindMiss(reason="binder_ids", detail=problem)
    if polarity:
        paired = [
            (n, spans[n], span_tokens(r, recorded))
            for n, r in sources.items()
            if n in spans and r is not None
        ]
        problem = polarity_problem(
            request, taken_spans, source_request, recorded_spans, slots=paired
        )
        if problem:
            return BindMiss(reason="polarity", detail=problem)
    return Bound(
        values=MappingProxyType(values),
        spans=MappingProxyType(spans),
        source_spans=tuple(recorded_spans),
    )


def rebind(bindings: Mapping[str, object], request: str) -> Bound | None:
    """The recorded values re-found in `request` (an exact hit: same words), with their
    spans in the request read plain; None when one is not there."""
    request = plain(request)
    values: dict[str, object] = {}
    spans: dict[str, tuple[int, int]] = {}
    for name, value in bindings.items():
        match = align(value, request)
        if match is None:
            return None
        values[name], spans[name] = match.value, (match.start, match.end)
    return Bound(values=MappingProxyType(values), spans=MappingProxyType(spans))


Got = tuple[object, tuple[int, int]] | BindMiss


def _bind_one(
    slot: Slot,
    request: str,
    said: list[Token],
    recorded: list[Token],
    source: tuple[int, int] | None,
    others: list[tuple[int, int]],
    gazetteers: Mapping[str, Sequence[str]],
) -> Got:
    kind, _, form = slot.type.partition(":")
    if kind == "enum":
        return _bind_listed(enum(request, form.split("|"), {}), request)
    if kind == "name":
        return _bind_listed(gazetteer(request, gazetteers.get(form, ())), request)
    if kind == "text":
        found = anchored_text(said, recorded, source, others)
        if isinstance(found, str):
            return BindMiss(reason=found, detail="the words around the slot differ")
        start, end = found
        text = request[start:end]
        return (text.casefold() if form == "lower" else text), found
    if kind not in TYPED_KINDS:
        return BindMiss(reason="binder_missing_slot", detail=f"unknown slot type {slot.type!r}")
    return _bind_typed(kind, form, request, said, recorded, source, others)


def _bind_typed(
    kind: str,
    form: str,
    request: str,
    said: list[Token],
    recorded: list[Token],
    source: tuple[int, int] | None,
    others: list[tuple[int, int]],
) -> Got:
    found = [e for e in candidates(request) if e.kind == kind]
    if not found:
        return BindMiss(reason="binder_missing_slot", detail=f"no {kind} in the request")
    if len(found) > 1:
        scores = [context_score((e.start, e.end), said, recorded, source, others) for e in found]
        best = max(scores)
        found = [e for e, s in zip(found, scores, strict=True) if s == best]
        if len(found) > 1:
            listed = ", ".join(e.text for e in found)
            return BindMiss(reason="binder_ambiguous", detail=f"several {kind}s: {listed}")
    entity = found[0]
    return _shaped(kind, form, entity), (entity.start, entity.end)


def _shaped(kind: str, form: str, entity: Entity) -> object:
    """The entity's value in the form the slot type records."""
    if form == "text":
        return entity.text
    if kind == "number":
        return str(entity.value) if form == "str" else entity.value
    if kind == "id":
        bare = _bare(entity.text)
        if form == "int":
            return int(bare) if bare.isdigit() else bare
        if form == "hash":
            return "#" + bare
        return bare if form == "bare" else entity.text
    if kind == "date" and form == "alt" and entity.alts:
        return entity.alts[0]
    return entity.value


def _bind_listed(result: object, request: str) -> Got:
    if isinstance(result, Ambiguous):
        listed = ", ".join(str(c) for c in result.candidates)
        return BindMiss(reason="binder_ambiguous", detail=f"several values: {listed}")
    if not isinstance(result, Found):
        return BindMiss(reason="binder_missing_slot", detail="no listed value in the request")
    value = str(result.value)
    match = _align_text(value, request)
    return value, ((match.start, match.end) if match is not None else (0, 0))


def _clash(spans: Mapping[str, tuple[int, int]], sources: Mapping[str, object]) -> str:
    names = sorted(spans)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (s1, e1), (s2, e2) = spans[a], spans[b]
            if s1 < e2 and s2 < e1 and sources[a] != sources[b]:
                return f"slots {a} and {b} take the same words"
    return ""
