"""Which extractor fills a memory entry, and the value it finds in a message.

The entry's `extract:` attribute decides; without one, `collect` steps use the extractor
implied by the type (`categorical` -> enum, `int`/`float` -> number, `bool` -> yes/no).
A found value is coerced to the entry's type; one that does not fit counts as missing.
"""

from __future__ import annotations

from pathlib import Path

from keel.extract import extractors as ex
from keel.extract.gazetteers import load_gazetteer
from keel.memory import MemoryField
from keel.memory.coerce import coerce
from keel.memory.extract_spec import ExtractSpec

_IMPLIED: dict[str, ExtractSpec] = {
    "categorical": ExtractSpec(kind="enum"),
    "int": ExtractSpec(kind="number"),
    "float": ExtractSpec(kind="number"),
    "bool": ExtractSpec(kind="yes_no"),
}


def spec_for(field: MemoryField, *, implied: bool) -> ExtractSpec | None:
    """The entry's extractor: its `extract:`, else (when `implied`) the one of its type."""
    if field.extract is not None:
        return field.extract
    return _IMPLIED.get(field.type) if implied else None


def extract(field: MemoryField, spec: ExtractSpec, text: str, root: Path) -> ex.Extraction:
    """What `spec` finds for `field` in `text`, coerced to the field's type."""
    found = _run(field, spec, text, root)
    if not isinstance(found, ex.Found):
        return found
    result = coerce(field, found.value)
    return ex.Found(value=result.value) if result.ok else ex.Missing()


def _run(field: MemoryField, spec: ExtractSpec, text: str, root: Path) -> ex.Extraction:
    kind = spec.kind
    if kind == "email":
        return ex.emails(text)
    if kind == "number":
        return ex.numbers(text)
    if kind == "date":
        return ex.dates(text)
    if kind == "yes_no":
        return ex.yes_no(text)
    if kind == "enum":
        return ex.enum(text, field.enum_values, spec.synonyms)
    if kind == "pattern" and spec.pattern is not None:
        return ex.pattern(text, spec.pattern)
    if kind == "text":
        return ex.whole(text)
    if kind == "gazetteer" and spec.gazetteer is not None:
        return ex.gazetteer(text, load_gazetteer(root, spec.gazetteer))
    return ex.Missing()
