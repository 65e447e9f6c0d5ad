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


def test_keel_serves_from_cache_and_never_replays_unsafely(
    ran: Ran,
) -> None:
    systems = _systems(ran)
    for name in ("Keel", "Keel (Metnos presets)"):
        keel = systems[name]
        assert keel["served"] > TURNS // 3, name
        assert keel["served_effectful"] > 0, name
        assert keel["unsafe"] == 0, name
    # A plain L0 hit extracts no intent; Metnos pays its intent model on every turn.
    assert systems["Keel"]["calls"]["intent"] < TURNS
    assert systems["Metnos-default"]["calls"]["intent"] == TURNS


def test_it_writes_only_its_own_section(ran: Ran) -> None:
    text, stdout = ran[1], ran[2]
    assert "Intro kept as it is." in text and "\n## Router\n\nkept\n" in text
    assert text.endswith("## Later\n\nkept too\n") and "old numbers" not in text
    section = text.split("## Plan cache\n", 1)[1].split("## Later", 1)[0]
    assert "python bench/plancache/run.py --turns 300 --embedder hash" in section
    assert "| system | model calls / turn | saved |" in section
    assert "Stale serves in the 500 turns after each change" in stdout


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
