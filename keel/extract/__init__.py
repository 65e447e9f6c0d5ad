"""Typed extractors: fill memory entries from a user message without a model.

An entry's `extract:` attribute is read with the rest of memory.yml
(`keel.memory.extract_spec`); here `extractors` finds values of a kind in text (pure),
`fill` picks the extractor of an entry and coerces what it found, `gazetteers` reads name
lists of a project. The loop uses them through `keel.loop.offline`.
"""

from keel.extract.extractors import Ambiguous, Extraction, Found, Missing

__all__ = ["Ambiguous", "Extraction", "Found", "Missing"]
