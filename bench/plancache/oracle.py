"""The oracle: the L3 planner (gold plan from a request's labels) and the gold outcome.

The planner is deterministic and always right: for a request it returns the gold plan of
its family and values at the current catalog version, and counts one planner call per
proposal. The gold outcome of a turn is that plan run (unserved) on the day's baseline;
it is memoised by family, values, version and day, since all of them fix it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from execution import Run, run_plan
from stream import BY_NAME, Request
from tools import Version, catalog_at

from keel.plans.catalog import Catalog
from keel.plans.intent import Clause, Intent
from keel.plans.plan import Plan, parse_plan


def _key(request: Request) -> tuple[object, ...]:
    return (request.family, tuple(sorted(request.values.items())))


_PLANS: dict[tuple[object, ...], Plan] = {}
_OUTCOMES: dict[tuple[object, ...], Run] = {}
_CATALOGS: dict[Version, Catalog] = {}


def catalog_for(version: Version) -> Catalog:
    """The catalog at `version` (built once)."""
    found = _CATALOGS.get(version)
    if found is None:
        found = _CATALOGS[version] = catalog_at(version)
    return found


def gold_plan(request: Request, version: Version) -> Plan:
    """The gold plan of `request` at `version`."""
    key = (*_key(request), version)
    found = _PLANS.get(key)
    if found is None:
        family = BY_NAME[request.family]
        parsed, errors = parse_plan(family.plan(request.values, version))
        if parsed is None:
            raise ValueError(f"{request.family}: {errors}")
        found = _PLANS[key] = parsed
    return found


def gold_intent(request: Request) -> Intent:
    """The intent a perfect extractor gives (the family's clauses)."""
    clauses = BY_NAME[request.family].clauses
    return Intent(clauses=tuple(Clause(verb=v, object=o) for v, o in clauses))


def gold_verbs(request: Request) -> frozenset[str]:
    """The verbs the request asks for (what licenses an effect)."""
    return frozenset(v for v, _ in BY_NAME[request.family].clauses)


async def gold_outcome(request: Request, version: Version, day: date) -> Run:
    """What the gold plan does on the day's baseline."""
    key = (*_key(request), version, day)
    found = _OUTCOMES.get(key)
    if found is None:
        found, _ = await run_plan(
            gold_plan(request, version),
            catalog_for(version),
            day=day,
            lang=request.lang,
            turn_id="gold",
            served=False,
        )
        if found.status != "ok":
            raise AssertionError(f"gold plan of {request.text!r} fails: {found}")
        _OUTCOMES[key] = found
    return found


@dataclass
class Planner:
    """The L3 proposer of one system: returns the gold plan, counts its calls."""

    calls: int = 0

    def propose(self, request: Request, version: Version) -> Plan:
        """One planner call."""
        self.calls += 1
        return gold_plan(request, version)
