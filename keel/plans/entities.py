"""Typed extractors over a request: the entity spans a slot can bind (plan-cache spec §3.6).

    find_entities("delete task #40 and the PDFs in /tmp from May 17, 2024")
      -> id "#40", glob "PDFs" (value "*.pdf"), path "/tmp", date "May 17, 2024" (2024-05-17)

Kinds, most specific first when two overlap: `quoted` ("..." or '...'), `url`, `email`,
`date` (ISO, Y/M/D, M/D/Y and D/M/Y, D.M.Y, "May 17, 2024", "17 May", "May 2024";
a time of day makes it a date-time), `time` (10:30, 3pm), `phone` (`+39 055 123 4567`,
`(555) 123-4567`, `555-123-4567`: a leading `+` or separated groups; value the digits, a
leading `+` kept), `path` (`/a/b`, `~/x`, `C:\\x`,
`a/b.txt`, `name.ext` with a known extension), `glob` (`*.pdf`, and file-type words:
"PDFs", "pdf files" -> `*.pdf`; any extension-like word right before "files"/"documents",
a known extension or an upper-case acronym: "TMP files" -> `*.tmp`; a lone `.tmp`;
a dot-file such as `.zshrc` is a path), `time_window` (relative words: today, yesterday, last
week, past 3 days, 2 days ago, monday: never absolute), `id` (`#40`, `#W1234567`, `W1234567`,
`INV-2024`),
`number` (digits with `1,000` and `2.5` forms, "five"). Each entity has a canonical
`value` (ISO dates, `HH:MM` times, lower-case e-mails, ints) so two spellings of one value
compare equal; a number inside a time window is a `part` a number slot may bind.

Dates, times and windows are read by `keel.plans.dates`. Spans are found on token
boundaries: `4` is not inside `40` or `W1234`. Pure; results are memoised per text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from keel.extract.extractors import EMAIL
from keel.plans.dates import dates, times, windows
from keel.plans.entity import KINDS, Entity, entity_of
from keel.plans.lexicon import (
    DETERMINERS,
    EXTENSIONS,
    FILE_TYPES,
    NUMBER_WORDS,
    PLURAL_TYPES,
    tokens,
)

_I: Final = re.IGNORECASE
_NUMWORD: Final = "|".join(NUMBER_WORDS)
_QUOTED: Final = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|(?<!\w)\'([^\'\n]+)\'(?!\w)')
_URL: Final = re.compile(r"\bhttps?://[^\s<>\"']+", _I)
_TYPE_WORDS: Final = "|".join(sorted(FILE_TYPES, key=len, reverse=True))
_TYPE_PLURAL: Final = re.compile(rf"\b({'|'.join(sorted(PLURAL_TYPES))})s\b", _I)
_TYPE_NOUN: Final = re.compile(rf"\b({_TYPE_WORDS})\s+(?:files?|documents?|docs)\b", _I)
_EXT_NOUN: Final = re.compile(
    r"(?<![\w.*])([A-Za-z][A-Za-z0-9]{1,4})\s+(?:files?|documents?|docs)\b", _I
)
_DOT_EXT: Final = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}")
_DOTFILE: Final = re.compile(r"\.[A-Za-z_][\w.-]*")
_NOT_TYPES: Final = DETERMINERS | frozenset(
    {"new", "old", "big", "small", "large", "recent", "open", "other", "same", "more", "most"}
    | {"few", "many", "no", "of", "in", "on", "to", "for", "from", "with", "and", "or", "list"}
    | {"find", "show", "move", "copy", "read", "send", "get", "sort", "edit", "save", "tag"}
)
"""Upper-case words before "files" that are no file type ("LIST ALL FILES")."""
_ID: Final = re.compile(
    r"(?<![\w#@/\\.-])(?:#\d+|#?(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])"
    r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9])(?![\w@/\\#]|\.\w)"
)
"""`#40`, `#W1234567` (a `#` before a letter too), `W1234567`, `INV-2024`."""
_PHONE: Final = re.compile(
    r"(?<![\w+#@/\\.-])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}"
    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}[ .-]\d{3}[ .-]\d{4})(?![\w@/\\#]|[.,:-]\d)"
)
_ORDINAL: Final = re.compile(r"\d+(?:st|nd|rd|th)", _I)
_NUMBER: Final = re.compile(
    r"(?<![\w.,#@/\\:-])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w@/\\#]|[.,:]\d)"
)
_NUMBER_WORD: Final = re.compile(rf"\b({_NUMWORD})\b", _I)
_NOT_PATHS: Final = frozenset(
    {"and/or", "w/", "n/a", "yes/no", "on/off", "read/write", "he/she", "his/her", "s/he", "i/o"}
)


@lru_cache(maxsize=2048)
def find_entities(text: str) -> tuple[Entity, ...]:
    """The non-overlapping entity spans of `text`, in text order."""
    found = [
        *_quoted(text),
        *_urls(text),
        *_emails(text),
        *dates(text),
        *times(text),
        *_phones(text),
        *_paths(text),
        *_globs(text),
        *windows(text),
        *_ids(text),
        *_numbers(text),
    ]
    found.sort(key=lambda e: (e.start, e.start - e.end, KINDS.index(e.kind)))
    kept: list[Entity] = []
    reach = -1
    for entity in found:
        if entity.start >= reach:
            kept.append(entity)
            reach = entity.end
    return tuple(kept)


def classify(value: str) -> Entity | None:
    """The entity that is the whole of `value` (surrounding white space aside), if any."""
    stripped = value.strip()
    found = find_entities(stripped)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(stripped):
        return found[0]
    return None


def has_absolute_time(text: str) -> bool:
    """`text` holds a calendar date (in any format the date extractor reads)."""
    return any(e.kind == "date" for e in find_entities(text))


def has_clock_time(text: str) -> bool:
    """`text` holds a date or a time of day."""
    return any(e.kind in ("date", "time") for e in find_entities(text))


def looks_like_epoch(value: float) -> bool:
    """A number in the range of Unix timestamps (seconds or milliseconds, 2001-2100)."""
    return 978_307_200 <= value <= 4_102_444_800 or 978_307_200_000 <= value <= 4_102_444_800_000


def _quoted(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner:
            out.append(entity_of("quoted", m, inner))
    return out


def _urls(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in _URL.finditer(text):
        raw = m.group(0).rstrip(".,;:!?)")
        out.append(
            Entity(kind="url", start=m.start(), end=m.start() + len(raw), text=raw, value=raw)
        )
    return out


def _emails(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in EMAIL.finditer(text):
        raw = m.group(0).rstrip(".")
        end = m.start() + len(raw)
        out.append(Entity(kind="email", start=m.start(), end=end, text=raw, value=raw.lower()))
    return out


def _paths(text: str) -> list[Entity]:
    out: list[Entity] = []
    for token in tokens(text):
        raw = token.text
        if _is_path(raw):
            out.append(Entity(kind="path", start=token.start, end=token.end, text=raw, value=raw))
    return out


def _is_path(raw: str) -> bool:
    if raw.casefold() in _NOT_PATHS or "://" in raw or "@" in raw or "*" in raw:
        return False
    if _DOTFILE.fullmatch(raw):
        return not _dot_glob(raw)
    if "?" in raw.rstrip("?"):
        return False
    if raw.startswith(("/", "~", "./", "../")) or re.match(r"[A-Za-z]:\\", raw) or "\\" in raw:
        return any(c.isalnum() for c in raw)
    if "/" in raw:
        parts = [p for p in raw.split("/") if p]
        return len(parts) >= 2 and not all(p.isdigit() for p in parts)
    stem, dot, ext = raw.rpartition(".")
    return bool(dot and stem and any(c.isalnum() for c in stem) and ext.casefold() in EXTENSIONS)


def _globs(text: str) -> list[Entity]:
    out: list[Entity] = []
    for token in tokens(text):
        raw = token.text
        if "*" in raw or "?" in raw.rstrip("?"):
            out.append(Entity(kind="glob", start=token.start, end=token.end, text=raw, value=raw))
        elif _dot_glob(raw):
            value = "*" + raw.lower()
            out.append(Entity(kind="glob", start=token.start, end=token.end, text=raw, value=value))
    for m in _TYPE_PLURAL.finditer(text):
        out.append(entity_of("glob", m, f"*.{FILE_TYPES[m.group(1).lower()]}"))
    for m in _TYPE_NOUN.finditer(text):
        out.append(entity_of("glob", m, f"*.{FILE_TYPES[m.group(1).lower()]}"))
    for m in _EXT_NOUN.finditer(text):
        if _extension_like(m.group(1)):
            out.append(entity_of("glob", m, f"*.{m.group(1).lower()}"))
    return out


def _dot_glob(raw: str) -> bool:
    """`.tmp`, `.PDF`: an extension said alone (a dot-file name is a path)."""
    if _DOT_EXT.fullmatch(raw) is None:
        return False
    return raw[1:].casefold() in EXTENSIONS or raw[1:].isupper()


def _extension_like(word: str) -> bool:
    """A known extension, or an upper-case acronym ("TMP", "MP3"), not a file-type name."""
    folded = word.casefold()
    if folded in FILE_TYPES:
        return False  # `_TYPE_NOUN` reads it ("text files" are `*.txt`)
    return folded in EXTENSIONS or (word.isupper() and folded not in _NOT_TYPES)


def _phones(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in _PHONE.finditer(text):
        digits = "".join(c for c in m.group(0) if c.isdigit())
        if len(digits) >= 7:
            value = ("+" if m.group(0).startswith("+") else "") + digits
            out.append(entity_of("phone", m, value))
    return out


def _ids(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in _ID.finditer(text):
        if _ORDINAL.fullmatch(m.group(0)) is None:
            out.append(entity_of("id", m, m.group(0)))
    return out


def _numbers(text: str) -> list[Entity]:
    out: list[Entity] = []
    for m in _NUMBER.finditer(text):
        raw = m.group(0).replace(",", "")
        value: object = float(raw) if "." in raw else int(raw)
        out.append(entity_of("number", m, value))
    for m in _NUMBER_WORD.finditer(text):
        out.append(entity_of("number", m, NUMBER_WORDS[m.group(1).lower()]))
    return out
