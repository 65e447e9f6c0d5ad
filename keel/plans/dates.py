"""Temporal extractors: calendar dates, times of day and relative time windows.

Dates (kind `date`, value ISO `YYYY-MM-DD`, with `THH:MM[:SS]` when a time is attached):
`2024-05-17` (and ISO date-times), `2024/05/17`, `5/17/2024` and `17/5/2024` (the US
reading first, the day-first reading as an alternative), `17.05.2024`, "May 17, 2024",
"17th of May 2024", "May 2024" (`2024-05`); without a year, "May 17" is `--05-17`, `3/5` is
`--03-05` (and `--05-03` as an alternative), "in March" is `--03` and "on the 5th" is `---05`
(ISO 8601 reduced forms). Impossible dates are not dates. Times (kind `time`, value
`HH:MM`): `10:30`, `10:30 pm`, `3pm`.
Relative windows (kind `time_window`, value the lower-case phrase with counts as digits):
today, yesterday, tomorrow, this/last/next week|month|monday..., last 3 days, 2 weeks ago,
a week ago, in 2 hours, the weekend, monday; in Italian oggi, ieri, domani, la settimana
scorsa, questa settimana, gli ultimi 3 giorni, 2 giorni fa, tra 2 ore, lunedì (and dates
such as "5 marzo 2026"). A window is never an absolute time; its count
is a `number` part. Pure.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from keel.extract.extractors import MONTHS
from keel.plans.entity import Entity, entity_of
from keel.plans.lexicon import NUMBER_WORDS

_I: Final = re.IGNORECASE
_MONTH: Final = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUMWORD: Final = "|".join(NUMBER_WORDS)
_UNIT: Final = r"(?:minute|hour|day|week|fortnight|month|quarter|year)s?"
_WEEKDAY: Final = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_CLOCK: Final = r"(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
_ISO: Final = re.compile(rf"(?<![\w/.-])(\d{{4}})-(\d{{1,2}})-(\d{{1,2}}){_CLOCK}(?![\w-])")
_YMD: Final = re.compile(r"(?<![\w/.-])(\d{4})/(\d{1,2})/(\d{1,2})(?![\w/])")
_SLASHED: Final = re.compile(r"(?<![\w/.-])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\w/])")
_DOTTED: Final = re.compile(r"(?<![\w/.-])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\w/]|\.\d)")
_MDY: Final = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?", _I
)
_DMY: Final = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({_MONTH})\b\.?(?:,?\s+(\d{{4}})\b)?", _I
)
_MONTH_YEAR: Final = re.compile(rf"\b({_MONTH})\.?\s+(\d{{4}})\b", _I)
_MONTH_NAME: Final = "|".join(
    sorted((m for m in MONTHS if len(m) > 3 or m == "may"), key=len, reverse=True)
)
_TIME_PREP: Final = r"(?:in|during|since|until|till|before|after|by|for|from|through|of|on)"
_MONTH_ONLY: Final = re.compile(rf"\b{_TIME_PREP}\s+(?:the\s+month\s+of\s+)?({_MONTH_NAME})\b", _I)
_MONTH_DAY: Final = re.compile(r"(?<![\w/.-])(\d{1,2})/(\d{1,2})(?![\w/]|\.\d)")
_DAY_ONLY: Final = re.compile(
    rf"\b{_TIME_PREP}\s+the\s+((\d{{1,2}})(?:st|nd|rd|th))\b(?!\s+(?:of\s+)?(?:{_MONTH})\b)", _I
)
_TIME: Final = re.compile(
    r"(?<![\w:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([ap])\.?m\b\.?)?(?![\w:]|\.\d)"
    r"|(?<![\w:.])(\d{1,2})\s*([ap])\.?m\b\.?",
    _I,
)
_IT_MONTHS: Final = {
    m: i
    for i, m in enumerate(
        (
            *("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio"),
            *("agosto", "settembre", "ottobre", "novembre", "dicembre"),
        ),
        start=1,
    )
}
_IT_DMY: Final = re.compile(
    rf"\b(\d{{1,2}})(?:°|º)?\s+({'|'.join(_IT_MONTHS)})\b(?:\s+(\d{{4}})\b)?", _I
)
_IT_UNIT: Final = r"(?:minut[oi]|or[ae]|giorn[oi]|settiman[ae]|mes[ei]|ann[oi])"
_IT_NUM: Final = r"(\d+|due|tre|quattro|cinque|sei|sette|otto|nove|dieci|quindici|venti|trenta)"
_IT_NUMBERS: Final = {"due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6, "sette": 7}
_IT_NUMBERS.update({"otto": 8, "nove": 9, "dieci": 10, "quindici": 15, "venti": 20, "trenta": 30})
_IT_DAY: Final = r"(?:luned[iì]|marted[iì]|mercoled[iì]|gioved[iì]|venerd[iì]|sabato|domenica)"
_IT_WINDOWS: Final = tuple(
    re.compile(p, _I)
    for p in (
        r"\b(?:l['\u2019]\s*altro\s*ieri|l['\u2019]altroieri|altroieri|dopodomani)\b",
        r"\b(?:oggi|stasera|stamattina|stanotte|ieri|domani)\b",
        r"\b(?:(?:la|il|lo|l['\u2019])\s*)?(?:settimana|mese|anno|weekend|fine\s+settimana)\s+"
        r"(?:scors[oa]|passat[oa]|prossim[oa])\b",
        r"\b(?:quest[oa]|quest['\u2019])\s*(?:settimana|mese|anno|mattina|pomeriggio|sera"
        r"|weekend|fine\s+settimana)\b",
        rf"\b(?:(?:negli|nelle|gli|le)\s+)?ultim[ie]\s+{_IT_NUM}\s+{_IT_UNIT}\b",
        rf"\b{_IT_NUM}\s+{_IT_UNIT}\s+fa\b",
        rf"\b(?:tra|fra)\s+{_IT_NUM}\s+{_IT_UNIT}\b",
        rf"\b{_IT_DAY}\b",
    )
)
"""Italian relative windows: oggi, ieri, domani, la settimana scorsa, questa settimana,
gli ultimi 3 giorni, 2 settimane fa, tra 2 ore, lunedì."""

_WINDOWS: Final = tuple(
    re.compile(p, _I)
    for p in (
        r"\b(?:the\s+)?day\s+(?:before\s+yesterday|after\s+tomorrow)\b",
        r"\b(?:today|tonight|yesterday|tomorrow)\b",
        rf"\b(?:this|last|next|past|previous|coming)\s+"
        rf"(?:morning|afternoon|evening|night|weekend|{_UNIT}|{_WEEKDAY})\b",
        rf"\b(?:within\s+the\s+)?(?:last|past|next|previous|coming)\s+(\d+|{_NUMWORD})\s+{_UNIT}\b",
        rf"\b(\d+|{_NUMWORD})\s+{_UNIT}\s+(?:ago|from\s+now)\b",
        rf"\b(?:a|an|one)\s+{_UNIT}\s+(?:ago|from\s+now)\b|\bin\s+(?:a|an|one)\s+{_UNIT}\b",
        rf"\bin\s+(\d+|{_NUMWORD})\s+{_UNIT}\b",
        r"\b(?:over\s+)?the\s+weekend\b",
        rf"\b{_WEEKDAY}s?\b",
    )
)


def dates(text: str) -> list[Entity]:
    """Calendar dates (overlapping readings; the caller keeps the longest)."""
    out: list[Entity] = []
    for m in _ISO.finditer(text):
        _add_date(out, m, [(m.group(1), m.group(2), m.group(3))], m.group(4, 5, 6))
    for m in _YMD.finditer(text):
        _add_date(out, m, [(m.group(1), m.group(2), m.group(3))])
    for m in _SLASHED.finditer(text):
        year = _year(m.group(3))
        _add_date(out, m, [(year, m.group(1), m.group(2)), (year, m.group(2), m.group(1))])
    for m in _DOTTED.finditer(text):
        _add_date(out, m, [(m.group(3), m.group(2), m.group(1))])
    for m in _MDY.finditer(text):
        _add_date(out, m, [(m.group(3), _month(m.group(1)), m.group(2))])
    for m in _DMY.finditer(text):
        _add_date(out, m, [(m.group(3), _month(m.group(2)), m.group(1))])
    for m in _MONTH_YEAR.finditer(text):
        month = int(_month(m.group(1)))
        out.append(entity_of("date", m, f"{int(m.group(2)):04d}-{month:02d}"))
    for m in _IT_DMY.finditer(text):
        _add_date(out, m, [(m.group(3), str(_IT_MONTHS[m.group(2).lower()]), m.group(1))])
    return out + _partial_dates(text)


def _partial_dates(text: str) -> list[Entity]:
    """Dates without a year: `5/17`, "in March", "on the 5th" (each an absolute time)."""
    out: list[Entity] = []
    for m in _MONTH_DAY.finditer(text):
        _add_date(out, m, [(None, m.group(1), m.group(2)), (None, m.group(2), m.group(1))])
    for m in _MONTH_ONLY.finditer(text):
        out.append(_span_entity(m, 1, f"--{int(_month(m.group(1))):02d}"))
    for m in _DAY_ONLY.finditer(text):
        if 1 <= int(m.group(2)) <= 31:
            out.append(_span_entity(m, 1, f"---{int(m.group(2)):02d}"))
    return out


def _span_entity(m: re.Match[str], group: int, value: str) -> Entity:
    start, end = m.span(group)
    return Entity(kind="date", start=start, end=end, text=m.group(group), value=value)


def times(text: str) -> list[Entity]:
    """Times of day."""
    out: list[Entity] = []
    for m in _TIME.finditer(text):
        hour = int(m.group(1) or m.group(5))
        minute = int(m.group(2) or 0)
        half = (m.group(4) or m.group(6) or "").lower()
        if half and not 1 <= hour <= 12:
            continue
        if half == "p" and hour != 12:
            hour += 12
        elif half == "a" and hour == 12:
            hour = 0
        if hour < 24 and minute < 60:
            out.append(entity_of("time", m, f"{hour:02d}:{minute:02d}"))
    return out


def windows(text: str) -> list[Entity]:
    """Relative time windows, with their counts as number parts."""
    out: list[Entity] = []
    numbers = {**NUMBER_WORDS, **_IT_NUMBERS}
    for pattern in (*_WINDOWS, *_IT_WINDOWS):
        for m in pattern.finditer(text):
            words = [str(numbers.get(w.lower(), w.lower())) for w in m.group(0).split()]
            parts: tuple[Entity, ...] = ()
            if pattern.groups and m.group(1):
                raw = m.group(1)
                count = int(raw) if raw.isdigit() else numbers[raw.lower()]
                parts = (
                    Entity(kind="number", start=m.start(1), end=m.end(1), text=raw, value=count),
                )
            out.append(entity_of("time_window", m, " ".join(words), parts=parts))
    return out


def _add_date(
    out: list[Entity],
    m: re.Match[str],
    readings: list[tuple[str | None, str, str]],
    clock: tuple[str | None, ...] = (None, None, None),
) -> None:
    values: list[str] = []
    for year, month, day in readings:
        value = _iso(year, month, day)
        if value is not None and value + _clock(clock) not in values:
            values.append(value + _clock(clock))
    if values:
        out.append(entity_of("date", m, values[0], alts=tuple(values[1:])))


def _iso(year: str | None, month: str, day: str) -> str | None:
    try:
        if year is None:
            dt.date(2000, int(month), int(day))  # a leap year: 29 February is a date
            return f"--{int(month):02d}-{int(day):02d}"
        return dt.date(int(year), int(month), int(day)).isoformat()
    except ValueError:
        return None


def _clock(clock: tuple[str | None, ...]) -> str:
    hour, minute, second = clock
    if hour is None or minute is None:
        return ""
    return f"T{int(hour):02d}:{int(minute):02d}" + (f":{int(second):02d}" if second else "")


def _year(raw: str) -> str:
    return raw if len(raw) == 4 else str(2000 + int(raw))


def _month(name: str) -> str:
    return str(MONTHS[name.lower()])
