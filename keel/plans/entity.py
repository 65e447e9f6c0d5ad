"""The entity value: a typed span of a request (what the typed extractors find).

Kinds, in order of precedence where two spans of the same extent overlap: `quoted`, `url`,
`email`, `date`, `time`, `phone`, `path`, `glob`, `time_window`, `id`, `number`. Pure values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

EntityKind = Literal[
    "quoted", "url", "email", "date", "time", "phone", "path", "glob", "time_window", "id",
    "number",
]  # fmt: skip
KINDS: Final[tuple[EntityKind, ...]] = (
    "quoted", "url", "email", "date", "time", "phone", "path", "glob", "time_window", "id",
    "number",
)  # fmt: skip
"""In order of precedence where two spans of the same extent overlap."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Entity:
    """A typed span of a text."""

    kind: EntityKind
    start: int
    end: int
    text: str
    value: object
    """The canonical value (ISO date, `HH:MM`, lower-case e-mail, int, `*.pdf`...)."""
    alts: tuple[object, ...] = ()
    """Other readings of the same text (the day-first reading of `05/06/2024`)."""
    parts: tuple[Entity, ...] = ()
    """Numbers inside a time window ("last 7 days")."""


def entity_of(
    kind: EntityKind,
    m: re.Match[str],
    value: object,
    *,
    alts: tuple[object, ...] = (),
    parts: tuple[Entity, ...] = (),
) -> Entity:
    """The entity of a whole regular-expression match."""
    return Entity(
        kind=kind,
        start=m.start(),
        end=m.end(),
        text=m.group(0),
        value=value,
        alts=alts,
        parts=parts,
    )
