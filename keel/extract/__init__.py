"""Typed extractors: fill memory entries from a user message without a model.

`spec` reads the `extract:` attribute of a memory entry, `extractors` finds values of a
kind in text (pure), `fill` picks the extractor of an entry and coerces what it found,
`gazetteers` reads name lists of a project. The loop uses them through
`keel.loop.offline`.
"""

from keel.extract.extractors import Ambiguous, Extraction, Found, Missing
from keel.extract.spec import ExtractSpec, parse_spec

__all__ = ["Ambiguous", "ExtractSpec", "Extraction", "Found", "Missing", "parse_spec"]
