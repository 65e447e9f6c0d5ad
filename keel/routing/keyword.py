"""A plain keyword router, the baseline the offline router is measured against.

A skill scores the share of the message's content words (lower-cased, stop words out,
a trailing `s` cut) that occur in its texts (`keel.routing.index.skill_texts`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from keel.routing.index import skill_texts
from keel.skills.model import SkillDocument

_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    "a an the i i'm im me my mine we our you your it its this that these those is are was "
    "were be been am do does did to of in on at for from with and or but if so can could "
    "would will should please want like need just some any there here what which how when "
    "where who hi hello hey thanks thank".split()
)


def words(text: str) -> set[str]:
    """Content words of `text`, crudely stemmed."""
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS:
            continue
        out.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return out


def keyword_scores(text: str, documents: Sequence[SkillDocument]) -> dict[str, float]:
    """Per skill, the share of the message's content words found in the skill's texts."""
    said = words(text)
    result: dict[str, float] = {}
    for document in documents:
        vocabulary: set[str] = set()
        for piece in skill_texts(document):
            vocabulary |= words(piece)
        result[document.skill_id] = len(said & vocabulary) / len(said) if said else 0.0
    return result
