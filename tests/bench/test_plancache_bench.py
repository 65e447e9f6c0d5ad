"""The plan-cache benchmark runs end to end on a tiny stream (structure only, no timing).

The real run is `python bench/plancache/run.py --write bench/RESULTS.md`; here 300 turns,
the hashed embedder (no model weights) and no SQLite lookup timing, in a subprocess (the
bench's modules are plain scripts on their own path).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "plancache" / "run.py"
TURNS = 300
Ran = tuple[dict[str, Any], str, str]
OLD = """\
# Benchmarks

Intro kept as it is.

## Router

kept

## Plan cache

old numbers

## Later

kept too
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    folder = tmp_path_factory.mktemp("plancache")
    results, counts = folder / "RESULTS.md", folder / "counts.json"
    results.write_text(OLD, encoding="utf-8")
    args = ["--turns", str(TURNS), "--embedder", "hash", "--lookup-entries", "0"]
    args += ["--write", str(results), "--json", str(counts)]
    done = subprocess.run(
        [sys.executable, str(RUN), *args], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(counts.read_text(encoding="utf-8"))
    return data, results.read_text(encoding="utf-8"), done.stdout


def _systems(ran: Ran) -> dict[str, dict[str, Any]]:
    systems = ran[0]["systems"]
    assert isinstance(systems, list)
    return {s["name"]: s for s in systems}


def test_every_system_saw_the_same_stream(ran: Ran) -> None:
    systems = _systems(ran)
    assert set(systems) == {
        "no cache",
        "Keel",
        "Keel (Metnos presets)",
        "Metnos-default",
        "GPTCache-style",
    }
    assert {s["turns"] for s in systems.values()} == {TURNS}
    assert len({s["stream"] for s in systems.values()}) == 1


def test_counts_add_up(ran: Ran) -> None:
    for name, s in _systems(ran).items():
        layers, kinds, calls = s["layers"], s["kinds"], s["calls"]
        assert isinstance(layers, dict) and isinstance(kinds, dict) and isinstance(calls, dict)
        assert sum(layers.values()) == TURNS, name
        assert sum(kinds.values()) == TURNS, name
        assert s["served"] + s["fell_through"] == s["attempts"], name
        assert sum(s["kind_hits"].values()) == s["served"], name
        # Every turn not served from a cache called the planner exactly once.
        assert calls.get("planner", 0) == TURNS - s["served"], name
        assert s["served_effectful"] <= s["effectful_attempts"] <= s["attempts"], name
        assert s["missed"] <= s["opportunities"] <= TURNS, name
    base = _systems(ran)["no cache"]
    assert base["attempts"] == 0 and base["successes"] == TURNS
    assert base["calls"]["planner"] == TURNS


def _adversarial(s: dict[str, Any], name: str) -> int:
    return sum(int(c.get(name, 0)) for c in s["adversarial"].values())


def test_keel_serves_from_cache_and_never_replays_unsafely(
    ran: Ran,
) -> None:
    systems = _systems(ran)
    for name in ("Keel", "Keel (Metnos presets)"):
        keel = systems[name]
        assert keel["served"] > TURNS // 3, name
        assert keel["served_effectful"] > 0, name
    assert systems["Keel"]["unsafe"] == 0
    # The Metnos presets drop the licence and polarity checks: only the workload designed
    # with the cache is safe for them, not the adversarial families.
    presets = systems["Keel (Metnos presets)"]
    assert presets["unsafe"] == _adversarial(presets, "unsafe")
    # A plain L0 hit extracts no intent; Metnos pays its intent model on every turn.
    assert systems["Keel"]["calls"]["intent"] < TURNS
    assert systems["Metnos-default"]["calls"]["intent"] == TURNS


def test_false_unsafe_and_leaking_replays_are_counted_apart(ran: Ran) -> None:
    systems = _systems(ran)
    adversarial = systems["no cache"]
    turns = sum(int(c["turns"]) for c in adversarial["adversarial"].values())
    assert TURNS // 20 < turns < TURNS // 4  # about 15 % of the stream
    for name, s in systems.items():
        assert _adversarial(s, "turns") == turns, name
        assert s["leaking"] <= s["principal_attempts"] <= s["attempts"], name
        assert _adversarial(s, "attempts") == s["principal_attempts"], name
        assert _adversarial(s, "leaking") == s["leaking"], name
        assert _adversarial(s, "false") <= s["false_replays"], name
        assert _adversarial(s, "unsafe") <= s["unsafe"], name
        failures = sum(int(n) for n in s["failures"].values())
        assert failures == s["false_replays"] + s["unsafe"] + s["leaking"], name
        assert sum(int(v) for v in s["adversarial_calls"].values()) >= 0, name
    assert systems["no cache"]["attempts"] == 0
    # The families have teeth: a cache keyed by the request's words serves one customer's
    # plan to the next.
    assert systems["Metnos-default"]["leaking"] > 0
    assert systems["GPTCache-style"]["leaking"] > 0


def test_it_writes_only_its_own_section(ran: Ran) -> None:
    text, stdout = ran[1], ran[2]
    assert "Intro kept as it is." in text and "\n## Router\n\nkept\n" in text
    assert text.endswith("## Later\n\nkept too\n") and "old numbers" not in text
    section = text.split("## Plan cache\n", 1)[1].split("## Later", 1)[0]
    assert "python bench/plancache/run.py --turns 300 --embedder hash" in section
    assert "| system | model calls / turn | saved |" in section
    assert "Stale serves in the 500 turns after each change" in stdout
    assert "| system | false / served attempts | 95 % upper | unsafe / effectful" in section
    assert "leaking / attempts for a signed-in customer" in section
    assert "| family | kind | Keel |" in section and "| cancel_two | second_id |" in section


JUDGE_CHECK = """
import sys
sys.path.insert(0, "bench/plancache")
from judge import Gold, unsafe_call
from execution import Call, Run
from oracle import catalog_for, gold_plan
from stream import Request
from tools import Version

request = Request(family="complete_task", values={"task": 40}, text="complete task 40",
                  lang="en", kind="slot", base="complete_task")
gold = Gold(request=request, run=Run(status="ok", calls=(), answer="", changes=(),
            committed=False), plan=gold_plan(request, Version()), version=Version(), index=0)
catalog = catalog_for(Version())

def run(tool, args, tag):
    call = Call(tool=tool, args=args, effectful=True, provenance={"task_id": tag})
    return Run(status="ok", calls=(call,), answer="", changes=(), committed=False)

for tool, task, tag, tagged in [
    ("complete_task", 40, "request_span", True),
    ("complete_task", 4, "cache_literal", True),
    ("complete_task", 4, "proposed", False),
    ("complete_task", 40, "proposed", False),
    ("delete_task", 40, "request_span", True),
]:
    served = run(tool, '{"task_id": %d}' % task, tag)
    print(repr(unsafe_call(served, gold, catalog, tagged=tagged)))
"""


LEAK_CHECK = """
import asyncio, sys
sys.path.insert(0, "bench/plancache")
from datetime import date
from execution import Run, run_plan
from family_adversarial import ADVERSARIAL
from judge import leak
from oracle import gold_outcome, gold_plan
from stream import Request
from tools import Version
from world import PRINCIPALS

async def main():
    day, clean = date(2026, 3, 2), 0
    for who in PRINCIPALS:
        for family in ADVERSARIAL:
            values = {**family.canonical(), **who.values()}
            values.update({k: v for k, v in {"order": who.orders[0],
                           "order2": who.orders[1]}.items() if k in family.slots})
            request = Request(family=family.name, values=values,
                              text=family.render(0, values), lang="en", kind="exact",
                              base=family.name, principal=who.email)
            run = await gold_outcome(request, Version(), day)
            assert not leak(run, request), (request.text, leak(run, request))
            clean += 1
    # Yusuf's reply served to Mei leaks his name; his cancel run for her, his order.
    yusuf, mei = PRINCIPALS[0], PRINCIPALS[1]
    for name in ("products_hello", "cancel_my_order"):
        family = next(f for f in ADVERSARIAL if f.name == name)
        text = family.render(0, family.canonical())
        his = Request(family=name, values=family.canonical(), text=text, lang="en",
                      kind="exact", base=name, principal=yusuf.email)
        hers = Request(family=name, values={**family.canonical(), **mei.values()}, text=text,
                       lang="en", kind="exact", base=name, principal=mei.email)
        run = await gold_outcome(his, Version(), day)
        print(leak(run, hers))
    print(clean)

asyncio.run(main())
"""


def test_gold_runs_never_leak_and_another_customers_run_does() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LEAK_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Yusuf's 'Yusuf'", "Yusuf's 'yusuf@shop.io'", "108"]


def test_the_judge_flags_unsafe_provenance_values_and_verbs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", JUDGE_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "''",
        "'complete_task.task_id tagged cache_literal'",
        "'complete_task.task_id=4 not from the request'",
        "''",
        "\"unlicensed delete_task for ['complete']\"",
    ]
