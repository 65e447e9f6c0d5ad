"""Keel's L0 and L1 lookup latency with 10,000 entries in a SQLite file (`SqlPlanStore`).

Real entries first: the canonical request of every family is planned, run, recorded and
approved (so read-only and effectful templates reach L1). The store is then filled to the
asked size with copies of those rows under other keys and intent signatures (so the tables
and indexes hold that many rows, spread over many intents). Timed with
`time.perf_counter`, one lookup at a time: L0 = a recorded request again (exact key),
L1 = a slot variant never recorded (L0 miss, intent extraction, L1 candidates, binding).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from execution import run_plan
from harness import day_of
from keel_system import SCOPE
from oracle import catalog_for, gold_plan
from stream import BY_NAME, POPULARITY, Request, Stream

from keel.plans.cache import Hit, PlanCache
from keel.plans.sql_store import SqlPlanStore
from keel.stores.sqlite import SqliteEventStore

PROBES = 200


def _canonical(name: str) -> Request:
    family = BY_NAME[name]
    values = family.canonical()
    text = family.render(0, values)
    return Request(family=name, values=values, text=text, lang="en", kind="exact", base=name)


def _variant(name: str, rng: random.Random) -> Request:
    from families import POOLS

    family = BY_NAME[name]
    values = {n: rng.choice(POOLS[p])[0] for n, p in family.slots.items()}
    text = family.render(0, values)
    return Request(family=name, values=values, text=text, lang="en", kind="slot", base=name)


async def _seed(cache: PlanCache, stream: Stream) -> None:
    turn = stream.turns[0]
    version, day = stream.version_at(0), day_of(turn)
    catalog = catalog_for(version)
    for i, name in enumerate(POPULARITY):
        request = _canonical(name)
        plan = gold_plan(request, version)
        run, _ = await run_plan(
            plan, catalog, day=day, lang="en", turn_id=f"seed-{i}", served=False
        )
        intent = cache.extract(request.text, catalog)
        await cache.record(
            request.text, executed=plan, intent=intent, catalog=catalog, now=turn.now,
            turn_id=f"seed-{i}", origin="planner", ok=run.status == "ok",
        )  # fmt: skip
        await cache.feedback(f"seed-{i}", "approve", now=turn.now)


async def _fill(store: SqlPlanStore, size: int) -> int:
    real = await store.entries(limit=10_000)
    have = len(real)
    i = 0
    while have < size and real:
        row = real[i % len(real)]
        copy = f"{i:06d}"
        await store.put(
            replace(
                row,
                id=f"{row.id}-{copy}",
                key=f"{row.key}-{copy}",
                intent_sig=f"{row.intent_sig}#{copy}",
            )
        )
        have, i = have + 1, i + 1
    return have


async def _time(cache: PlanCache, requests: list[Request], stream: Stream) -> tuple[float, float]:
    catalog, now = catalog_for(stream.version_at(0)), stream.turns[0].now
    samples, hits = [], 0
    for request in requests:
        started = time.perf_counter()
        found = await cache.lookup(request.text, catalog=catalog, now=now)
        samples.append((time.perf_counter() - started) * 1000)
        hits += int(isinstance(found, Hit))
    return statistics.median(samples), hits / len(requests)


async def lookup_p50(size: int, stream: Stream) -> str:
    """One line: L0 and L1 lookup p50 over a SQLite store of `size` entries."""
    rng = random.Random(5)
    with tempfile.TemporaryDirectory(prefix="keel-plancache-") as tmp:
        events = await SqliteEventStore.open(Path(tmp) / "plans.db")
        try:
            store = SqlPlanStore(events.engine)
            cache = PlanCache(store=store, scope=SCOPE)
            await _seed(cache, stream)
            rows = await _fill(store, size)
            names = list(POPULARITY)
            exact = [_canonical(rng.choice(names)) for _ in range(PROBES)]
            slotted = [n for n in names if BY_NAME[n].slots]
            variants = [_variant(rng.choice(slotted), rng) for _ in range(PROBES)]
            l0, l0_hits = await _time(cache, exact, stream)
            l1, l1_hits = await _time(cache, variants, stream)
        finally:
            await events.close()
    return (
        f"Keel lookup on a SQLite file with {rows} entries (SqlPlanStore, {PROBES} lookups each): "
        f"L0 p50 {l0:.2f} ms ({l0_hits:.0%} served), L1 p50 {l1:.2f} ms "
        f"({l1_hits:.0%} of never-seen slot variants served)."
    )
