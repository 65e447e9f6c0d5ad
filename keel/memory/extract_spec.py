"""The `extract:` attribute of a memory entry: which typed extractor may fill it.

Pure (the extractors themselves are `keel.extract`). Written in `memory.yml` beside the
entry's other attributes:

```yaml
email:    {type: text, llm_settable: true, extract: email}
zip:      {type: text, llm_settable: true, extract: {pattern: '\\b\\d{5}\\b'}}
order_id: {type: text, llm_settable: true, extract: {pattern: '#?W\\d{7}', ask: utter_ask_order}}
first_name: {type: text, llm_settable: true, extract: {gazetteer: data/first_names.txt}}
reason:
  type: categorical
  enum_values: [no longer needed, ordered by mistake]
  extract: {synonyms: {no longer needed: ["don't need", "not needed"]}}
```

Kinds: `email`, `number`, `date`, `yes_no`, `enum` (categorical entries), `pattern`
(a regular expression; its first group, else the whole match, is the value), `gazetteer`
(a text file of the project, one name per line), `text` (the whole message, as written:
a free-text entry such as a summary). `ask` names the response that asks for
the value again when it was not found (a `collect` step asks with its own utterance).
Categorical, int, float and bool entries have an implied extractor (`enum`, `number`,
`yes_no`) for `collect` steps; text entries need an explicit `extract:`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal, cast

ExtractKind = Literal["email", "number", "date", "yes_no", "enum", "pattern", "gazetteer", "text"]
SIMPLE_KINDS: Final = frozenset({"email", "number", "date", "yes_no", "enum", "text"})
SPEC_KEYS: Final = frozenset({"kind", "pattern", "gazetteer", "synonyms", "ask"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtractSpec:
    """How one memory entry is filled without a model."""

    kind: ExtractKind
    pattern: str | None = None
    """For `pattern`: the regular expression (searched case-insensitively)."""
    gazetteer: str | None = None
    """For `gazetteer`: the list's path, relative to the project root."""
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """For `enum`: other phrasings per enum value."""
    ask: str | None = None
    """The response that asks for the value again."""


def parse_spec(raw: object) -> tuple[ExtractSpec | None, list[str]]:
    """The spec written as `raw` (a kind name or a mapping), and what is wrong with it."""
    if isinstance(raw, str):
        if raw in SIMPLE_KINDS:
            return ExtractSpec(kind=cast(ExtractKind, raw)), []
        return None, [f"unknown extractor {raw!r} (known: {', '.join(sorted(SIMPLE_KINDS))})"]
    if not isinstance(raw, Mapping):
        return None, [f"`extract` must be an extractor name or a mapping, got {raw!r}"]
    problems = [f"unknown key `{k}`" for k in raw if k not in SPEC_KEYS]
    kind = _kind_of(raw, problems)
    pattern = _pattern(raw.get("pattern"), problems)
    gazetteer = _text(raw, "gazetteer", problems)
    ask = _text(raw, "ask", problems)
    synonyms = _synonyms(raw.get("synonyms"), problems)
    if kind is None or problems:
        return None, problems or ["`extract` names no extractor"]
    spec = ExtractSpec(kind=kind, pattern=pattern, gazetteer=gazetteer, synonyms=synonyms, ask=ask)
    return spec, []


def _kind_of(raw: Mapping[object, object], problems: list[str]) -> ExtractKind | None:
    explicit = raw.get("kind")
    if explicit is not None:
        if explicit in SIMPLE_KINDS or explicit in ("pattern", "gazetteer"):
            return cast(ExtractKind, explicit)
        problems.append(f"unknown extractor kind {explicit!r}")
        return None
    if "pattern" in raw:
        return "pattern"
    if "gazetteer" in raw:
        return "gazetteer"
    if "synonyms" in raw:
        return "enum"
    return None


def _text(raw: Mapping[object, object], key: str, problems: list[str]) -> str | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and value.strip()):
        return value.strip() if isinstance(value, str) else None
    problems.append(f"`{key}` must be non-empty text, got {value!r}")
    return None


def _pattern(value: object, problems: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        problems.append(f"`pattern` must be a regular expression, got {value!r}")
        return None
    try:
        re.compile(value)
    except re.error as exc:
        problems.append(f"`pattern` {value!r} is not a valid regular expression: {exc}")
        return None
    return value


def _synonyms(value: object, problems: list[str]) -> Mapping[str, tuple[str, ...]]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        problems.append("`synonyms` must map enum values to lists of phrasings")
        return MappingProxyType({})
    out: dict[str, tuple[str, ...]] = {}
    for key, phrasings in value.items():
        items = [phrasings] if isinstance(phrasings, str) else phrasings
        if not isinstance(items, list | tuple) or not all(
            isinstance(p, str) and p.strip() for p in items
        ):
            problems.append(f"`synonyms` of {key!r} must be a list of phrasings")
            continue
        out[str(key)] = tuple(p.strip() for p in items)
    return MappingProxyType(out)
