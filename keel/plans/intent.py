"""An intent: the ordered clauses (verb, object) a request asks for (plan-cache spec §3.7).

The intent signature `verb:object>verb:object` is the L1 key and the licence for effects: a
cached plan's effectful step runs only when its verb matches a clause of the *current*
intent. Intents are extracted model-free (`keel.plans.intents`) or stated by the L3
planner in a plan's `meta.intent`. Pure values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True, slots=True)
class Clause:
    """One thing asked: `cancel order`, `list files`."""

    verb: str
    object: str
    qualifier: str | None = None
    negated: bool = False
    """The clause is asked *not* to be done ("don't cancel")."""

    @property
    def key(self) -> str:
        """`verb:object[:qualifier]`, with a `!` before a negated verb."""
        head = ("!" if self.negated else "") + f"{self.verb}:{self.object}"
        return head if self.qualifier is None else f"{head}:{self.qualifier}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Intent:
    """The ordered clauses of a request."""

    clauses: tuple[Clause, ...] = ()

    @property
    def signature(self) -> str:
        """The clause keys joined by `>`; empty for an incomplete intent."""
        return ">".join(c.key for c in self.clauses)

    @property
    def complete(self) -> bool:
        """At least one clause, and each names its object: L1 needs a complete intent (a
        bare `delete:` would key "delete the spam" and "delete everything" alike)."""
        return bool(self.clauses) and all(c.object for c in self.clauses)

    @property
    def verbs(self) -> frozenset[str]:
        """The verbs asked for (negated clauses excluded)."""
        return frozenset(c.verb for c in self.clauses if not c.negated)

    def to_json(self) -> list[dict[str, object]]:
        """The stored form."""
        return [
            {"verb": c.verb, "object": c.object, "qualifier": c.qualifier, "negated": c.negated}
            for c in self.clauses
        ]

    @staticmethod
    def from_json(raw: object) -> Intent:
        """Read the stored form back (anything malformed reads as the empty intent)."""
        if not isinstance(raw, list | tuple):  # tuples: read back from a frozen event value
            return Intent()
        clauses: list[Clause] = []
        for item in raw:
            if not isinstance(item, Mapping):
                return Intent()
            verb, obj = item.get("verb"), item.get("object")
            if not isinstance(verb, str) or not isinstance(obj, str):
                return Intent()
            qualifier = item.get("qualifier")
            clauses.append(
                Clause(
                    verb=verb,
                    object=obj,
                    qualifier=qualifier if isinstance(qualifier, str) else None,
                    negated=item.get("negated") is True,
                )
            )
        return Intent(clauses=tuple(clauses))
