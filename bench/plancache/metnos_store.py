"""Metnos's L0 (fast path) and L1 (autopath) state, in memory, with its default knobs.

L0 rows keyed by the normalised-text hash, with an embedding for the 0b cosine scan over
rows that are not query-specific (>= 0.92). L1 observations are clustered greedily against
the 200 most recent (>= 0.90 joins); autopaths are promoted by one approve (`MIN_OBS` 1) or
seeded as shadow champions after a >= 4-step plan whose intent was seen twice; lookup path 1
goes through the nearest observation's cluster (>= 0.90), path 2 through the intent hash
with the 0.87 relevance floor; both need the stored object to equal the current one.
Three rejects of an (intent, shape) over all history demote it and write an anti-autopath.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from embed import Vector, cosine_max
from metnos_rules import is_query_specific, pool_sig, tools_sig

from keel.plans.catalog import Catalog
from keel.plans.plan import Plan, shape_hash

Clauses = tuple[tuple[str, str], ...]
DAY = 86400.0
COSINE_HIGH, L0B_COSINE, FLOOR = 0.90, 0.92, 0.87
MIN_OBS, SEED_STEPS, SEED_REPEAT = 1, 4, 2
RECENT_OBS, FLOOR_OBS = 200, 50
L0_MAX, L0_GRACE, L0_STALE = 500, 14 * DAY, 30 * DAY
ANTI_TTL, KEEP_OBS, L1_STALE, DEMOTED_TTL = 30 * DAY, 5000, 90 * DAY, 30 * DAY


def intent_hash(clauses: Clauses) -> str:
    """verb|object for one clause; verb|object|v1|o1;v2|o2... for compound intents."""
    verb, obj = clauses[0]
    text = f"{verb}|{obj}"
    if len(clauses) > 1:
        text += "|" + ";".join(f"{v}|{o}" for v, o in clauses)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(slots=True)
class L0Row:
    key: str
    vector: Vector | None
    plan: Plan
    origin: str
    clauses: Clauses
    query_specific: bool
    created: float
    tools_sig: str
    pool_sig: str
    uses: int = 0
    last_used: float = 0.0


@dataclass(slots=True)
class Observation:
    turn_id: str
    intent: str
    clauses: Clauses
    plan: Plan
    shape: str
    cluster: int
    vector: Vector
    ts: float
    verdict: str = ""


@dataclass(slots=True)
class Autopath:
    intent: str
    shape: str
    cluster: int
    plan: Plan
    obj: str
    tools_sig: str
    pool_sig: str
    created: float
    status: str = "active"
    uses: int = 0
    ok: int = 0
    shadow: bool = False
    last_used: float = 0.0


class MetnosState:
    """The two persistent layers (see the module docstring)."""

    def __init__(self) -> None:
        self.epoch = 1
        self.l0: dict[str, L0Row] = {}
        self.observations: list[Observation] = []
        self.by_turn: dict[str, Observation] = {}
        self.autopaths: dict[tuple[str, str], Autopath] = {}
        self.anti: dict[tuple[str, str], float] = {}
        self._clusters = 0
        self._l0_matrix: tuple[list[str], Vector] | None = None

    def sigs(self, plan: Plan, clauses: Clauses, catalog: Catalog) -> tuple[str, str]:
        return tools_sig(plan, catalog, str(self.epoch)), pool_sig(clauses, catalog)

    def valid(self, plan: Plan, sigs: tuple[str, str], clauses: Clauses, catalog: Catalog) -> bool:
        """World signatures still hold for today's catalog and intent."""
        if any(tool not in catalog for tool in plan.tools):
            return False
        return self.sigs(plan, clauses, catalog) == sigs

    # -- L0 ---------------------------------------------------------------------------

    def nearest_l0(self, vector: Vector) -> tuple[L0Row | None, float]:
        """The 0b candidate: the closest row that has an embedding and is not query-specific."""
        if self._l0_matrix is None:
            keys = [k for k, r in self.l0.items() if r.vector is not None and not r.query_specific]
            rows = [self.l0[k].vector for k in keys]
            matrix = np.stack(rows) if rows else np.zeros((0, vector.shape[0]), np.float32)
            self._l0_matrix = (keys, matrix)  # type: ignore[assignment]
        keys, matrix = self._l0_matrix
        index, score = cosine_max(vector, matrix)
        return (self.l0[keys[index]] if index >= 0 else None), score

    def put_l0(self, row: L0Row) -> None:
        """Upsert on the text hash: the last success wins; an existing embedding is kept."""
        old = self.l0.get(row.key)
        if old is not None and row.vector is None:
            row.vector = old.vector
        if old is not None:
            row.uses, row.created = old.uses, old.created
        self.l0[row.key] = row
        self._l0_matrix = None

    def drop_l0(self, key: str) -> None:
        if self.l0.pop(key, None) is not None:
            self._l0_matrix = None

    # -- L1 ---------------------------------------------------------------------------

    def _recent(self, n: int) -> list[Observation]:
        return self.observations[-n:]

    def observe(
        self, turn_id: str, clauses: Clauses, plan: Plan, vector: Vector, now: float
    ) -> None:
        recent = self._recent(RECENT_OBS)
        matrix = np.stack([o.vector for o in recent]) if recent else np.zeros((0, vector.shape[0]))
        index, score = cosine_max(vector, matrix.astype(np.float32))
        if index >= 0 and score >= COSINE_HIGH:
            cluster = recent[index].cluster
        else:
            self._clusters += 1
            cluster = self._clusters
        obs = Observation(
            turn_id, intent_hash(clauses), clauses, plan, shape_hash(plan), cluster, vector, now
        )
        self.observations.append(obs)
        self.by_turn[turn_id] = obs

    def _best(self, paths: Sequence[Autopath]) -> Autopath | None:
        live = [p for p in paths if p.status == "active"]
        return min(live, key=lambda p: (-p.ok, -p.uses, p.intent + p.shape), default=None)

    def lookup_l1(self, clauses: Clauses, vector: Vector) -> Autopath | None:
        """Path 1 (nearest observation's cluster), then path 2 (intent hash + floor)."""
        obj = clauses[0][1]
        recent = self._recent(RECENT_OBS)
        if recent:
            index, score = cosine_max(vector, np.stack([o.vector for o in recent]))
            if score >= COSINE_HIGH:
                cluster = recent[index].cluster
                found = self._best([p for p in self.autopaths.values() if p.cluster == cluster])
                if found and not is_query_specific(found.plan) and found.obj == obj:
                    return found
        ih = intent_hash(clauses)
        found = self._best([p for p in self.autopaths.values() if p.intent == ih])
        if found is None or found.obj != obj:
            return None
        members = [o for o in self.observations if o.cluster == found.cluster][-FLOOR_OBS:]
        if members:
            _, floor = cosine_max(vector, np.stack([o.vector for o in members]))
            if floor < FLOOR:
                return None
        return found

    def promote(self, obs: Observation, catalog: Catalog, now: float, *, shadow: bool) -> None:
        """Create or refresh the autopath of the observation's (intent, shape)."""
        if is_query_specific(obs.plan):
            return
        key = (obs.intent, obs.shape)
        sigs = self.sigs(obs.plan, obs.clauses, catalog)
        found = self.autopaths.get(key)
        if found is None:
            self.autopaths[key] = Autopath(
                obs.intent, obs.shape, obs.cluster, obs.plan, obs.clauses[0][1], *sigs, now,
                shadow=shadow, last_used=now,
            )  # fmt: skip
            return
        found.uses, found.ok, found.shadow, found.status = (
            found.uses + 1,
            found.ok + 1,
            False,
            "active",
        )
        found.tools_sig, found.pool_sig, found.plan = *sigs, obs.plan

    def seed_shadow(self, obs: Observation, catalog: Catalog, now: float) -> None:
        """A >= 4-step plan, its intent observed twice, no live champion: a shadow champion."""
        if len(obs.plan.tool_steps) < SEED_STEPS:
            return
        if sum(1 for o in self.observations if o.intent == obs.intent) < SEED_REPEAT:
            return
        if any(p.intent == obs.intent and p.status == "active" for p in self.autopaths.values()):
            return
        self.promote(obs, catalog, now, shadow=True)

    def verdict(self, turn_id: str, verdict: str, catalog: Catalog, now: float) -> None:
        """A ✓ or ✗ on a turn's observation (L0-served turns have none)."""
        obs = self.by_turn.get(turn_id)
        if obs is None:
            return
        obs.verdict = verdict
        key = (obs.intent, obs.shape)
        same = [o for o in self.observations if (o.intent, o.shape) == key]
        if verdict == "ok":
            self.anti.pop(key, None)
            if sum(1 for o in same if o.verdict == "ok") >= MIN_OBS:
                self.promote(obs, catalog, now, shadow=False)
        elif sum(1 for o in same if o.verdict == "fail") >= 3:
            self.anti[key] = now + ANTI_TTL
            if key in self.autopaths:
                self.autopaths[key].status, self.autopaths[key].last_used = "demoted", now

    def prune(self, catalog: Catalog, now: float) -> None:
        """The nightly reaper: aging, missing tools, superseded families, caps."""
        for key, row in list(self.l0.items()):
            family = {f"{v}_{o}" for v, o in row.clauses} & set(catalog)
            if (
                (row.uses == 0 and now - row.created > L0_GRACE)
                or now - max(row.last_used, row.created) > L0_STALE
                or any(t not in catalog for t in row.plan.tools)
                or bool(family - set(row.plan.tools))
            ):
                self.drop_l0(key)
        newest = sorted(self.l0.values(), key=lambda r: max(r.last_used, r.created))
        for row in newest[: max(0, len(newest) - L0_MAX)]:
            self.drop_l0(row.key)
        self.anti = {k: t for k, t in self.anti.items() if t > now}
        for key, path in list(self.autopaths.items()):
            if (
                any(t not in catalog for t in path.plan.tools)
                or (path.status == "demoted" and now - path.last_used > DEMOTED_TTL)
                or (path.status == "active" and now - path.last_used > L1_STALE)
            ):
                del self.autopaths[key]
        unvoted = [o for o in self.observations if not o.verdict]
        drop = {id(o) for o in unvoted[: max(0, len(unvoted) - KEEP_OBS)]}
        self.observations = [o for o in self.observations if id(o) not in drop]
        self.by_turn = {t: o for t, o in self.by_turn.items() if id(o) not in drop}
