"""Typed extractors: find one value of a kind in a user message, or say it is not there.

Pure and deterministic. Each extractor returns every distinct candidate it sees; a value
is used only when there is exactly one (`Found`). None found is `Missing`; several is
`Ambiguous` (the caller then asks the model, when there is one, or asks the user again).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
"""An email address in text (also what plan entities call an email)."""
_NUMBER = re.compile(r"(?<![\w.#-])-?\d+(?:[.,]\d+)?(?![\w@])")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
MONTHS: dict[str, int] = {
    name: index
    for index, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
"""English month names and their abbreviations, lower case, to the month's number (1-12)."""
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WORD_DATE = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")

YES = ("yes", "yeah", "yep", "sure", "ok", "okay", "please do", "go ahead", "confirm", "correct")
NO = ("no", "nope", "don't", "do not", "keep it", "cancel that", "stop", "never mind")


@dataclass(frozen=True, kw_only=True, slots=True)
class Found:
    """Exactly one value was found."""

    value: object


@dataclass(frozen=True, kw_only=True, slots=True)
class Ambiguous:
    """Several different values were found."""

    candidates: tuple[object, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Missing:
    """No value was found."""


Extraction = Found | Ambiguous | Missing


def decide(candidates: Iterable[object]) -> Extraction:
    """`Found` for one distinct candidate, `Ambiguous` for several, `Missing` for none."""
    distinct: list[object] = []
    for candidate in candidates:
        if candidate not in distinct:
            distinct.append(candidate)
    if not distinct:
        return Missing()
    if len(distinct) == 1:
        return Found(value=distinct[0])
    return Ambiguous(candidates=tuple(distinct))


def emails(text: str) -> Extraction:
    """Email addresses (lower-cased)."""
    return decide(m.group(0).lower().rstrip(".") for m in EMAIL.finditer(text))


def numbers(text: str) -> Extraction:
    """Numbers written with digits (an int when whole); ids and emails are not numbers."""
    values: list[object] = []
    for match in _NUMBER.finditer(text):
        raw = match.group(0).replace(",", ".")
        values.append(float(raw) if "." in raw else int(raw))
    return decide(values)


def dates(text: str) -> Extraction:
    """Calendar dates as ISO text: `2024-05-17`, `5/17/2024` (US order), `May 17, 2024`,
    `17 May 2024`. Impossible dates are ignored."""
    found: list[object] = []
    for m in _ISO_DATE.finditer(text):
        found.append(_iso(m.group(1), m.group(2), m.group(3)))
    for m in _SLASH_DATE.finditer(text):
        found.append(_iso(m.group(3), m.group(1), m.group(2)))
    for m in _WORD_DATE.finditer(text):
        found.append(_iso(m.group(3), str(MONTHS[m.group(1).lower()]), m.group(2)))
    for m in _DAY_FIRST.finditer(text):
        found.append(_iso(m.group(3), str(MONTHS[m.group(2).lower()]), m.group(1)))
    return decide(d for d in found if d is not None)


def _iso(year: str, month: str, day: str) -> str | None:
    try:
        return dt.date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def pattern(text: str, regex: str) -> Extraction:
    """Matches of `regex` (case-insensitive): the first group when it has one."""
    compiled = re.compile(regex, re.IGNORECASE)
    return decide(m.group(1) if compiled.groups else m.group(0) for m in compiled.finditer(text))


def _normal(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.lower().replace("\u2019", "'"))) + " "


def enum(text: str, values: Iterable[str], synonyms: Mapping[str, Iterable[str]]) -> Extraction:
    """The enum value whose spelling (or a synonym) appears in the text as whole words;
    the longest phrasing wins where two overlap ("not needed" inside "no longer needed")."""
    said = _normal(text)
    hits: list[tuple[int, int, str]] = []
    for value in values:
        for phrase in (value, *synonyms.get(value, ())):
            needle = _normal(phrase)
            if needle.strip() and needle in said:
                start = said.index(needle)
                hits.append((start, start + len(needle), value))
    kept = [h for h in hits if not any(_inside(h, o) for o in hits if o[2] != h[2])]
    return decide(value for _, _, value in kept)


def _inside(inner: tuple[int, int, str], outer: tuple[int, int, str]) -> bool:
    return (
        outer[0] <= inner[0]
        and inner[1] <= outer[1]
        and (outer[1] - outer[0]) > (inner[1] - inner[0])
    )


def yes_no(text: str) -> Extraction:
    """True for a yes, False for a no (a message with both is ambiguous)."""
    said = _normal(text)
    answers: list[object] = []
    if any(_normal(w) in said for w in YES):
        answers.append(True)
    if any(_normal(w) in said for w in NO):
        answers.append(False)
    return decide(answers)


def whole(text: str) -> Extraction:
    """The whole message, trimmed (a free-text entry); not a slash command or a `set:` tap."""
    said = " ".join(text.split())
    if not said or said.startswith(("/", "set:")):
        return Missing()
    return Found(value=said)


def gazetteer(text: str, names: Iterable[str]) -> Extraction:
    """Names of the list found as whole words (case-insensitive), in the list's spelling."""
    said = _normal(text)
    return decide(name for name in names if _normal(name).strip() and _normal(name) in said)
