"""`MemoryPlanStore`'s observation indexes against a naive model (a list scanned per query).

The conformance suite (tests/conformance/test_plan_store.py) checks the port's behaviour on
every store; this checks that the memory store's incremental bookkeeping (turn and intent
indexes, the (ts, insertion) order, the signal counts) never drifts from its observations
over random sequences of adds, signals and flushes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.plans.memory_store import MemoryPlanStore
from keel.plans.store_port import Observation, SignalCount

TURNS = st.sampled_from(["t1", "t2", "t3"])
SCOPES = st.sampled_from(["a", "b"])
SHAPES = st.sampled_from(["s1", "s2"])

ADD = st.builds(
    lambda turn, scope, shape, exact, ts: (
        "add",
        Observation(
            turn_id=turn,
            scope=scope,
            intent_sig="i",
            shape_hash=shape,
            plan_json="{}",
            exact_only=exact,
            ts=ts,
        ),
    ),
    TURNS,
    SCOPES,
    SHAPES,
    st.booleans(),
    st.sampled_from([0.0, 1.0, 2.0, 3.0]),
)
SIGNAL = st.tuples(
    st.just("signal"),
    TURNS,
    st.sampled_from(["approve", "reject", "implicit_ok", "repeat"]),
    st.sampled_from([0.3, 1.0]),
)
FLUSH = st.tuples(st.just("flush"))
OPS = st.lists(st.one_of(ADD, SIGNAL, ADD, SIGNAL, ADD, SIGNAL, FLUSH), min_size=8, max_size=40)


def naive_counts(log: list[Observation], scope: str, shape: str) -> list[SignalCount]:
    tally = Counter(
        (o.signal, o.signal_weight)
        for o in log
        if (o.scope, o.shape_hash) == (scope, shape) and o.signal and not o.exact_only
    )
    return [SignalCount(signal=s, weight=w, count=n) for (s, w), n in sorted(tally.items())]


async def replay(ops: list[tuple[object, ...]]) -> None:
    store = MemoryPlanStore()
    log: list[Observation] = []
    for op in ops:
        if op[0] == "add":
            assert isinstance(op[1], Observation)
            await store.add_observation(op[1])
            log.append(op[1])
        elif op[0] == "signal":
            turn, signal, weight = op[1:]
            assert isinstance(turn, str) and isinstance(signal, str)
            assert isinstance(weight, float)
            await store.set_signal(turn, signal, weight)
            log = [
                dataclasses.replace(o, signal=signal, signal_weight=weight)
                if o.turn_id == turn
                else o
                for o in log
            ]
        else:
            await store.flush("l1")
            log = []
        await check(store, log)


async def check(store: MemoryPlanStore, log: list[Observation]) -> None:
    newest = [o for _, o in sorted(enumerate(log), key=lambda p: (-p[1].ts, -p[0]))]
    for limit in (0, 1, 3, 100):
        assert await store.recent_observations(limit) == newest[:limit]
    for turn in ("t1", "t2", "t3"):
        assert await store.observations_for_turn(turn) == [o for o in log if o.turn_id == turn]
    for scope in ("a", "b"):
        mine = [o for o in log if o.scope == scope]
        assert await store.observations(scope, "i") == mine
        assert await store.count_observations(scope, "i") == len(mine)
        for shape in ("s1", "s2"):
            assert await store.count_observations(scope, "i", shape) == len(
                [o for o in mine if o.shape_hash == shape]
            )
            assert await store.signal_counts(scope, "i", shape) == naive_counts(log, scope, shape)
    assert (await store.counts())["observations"] == len(log)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_memory_store_indexes_agree_with_a_scan(ops: list[tuple[object, ...]]) -> None:
    asyncio.run(replay(ops))
