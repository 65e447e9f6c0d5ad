"""The peer benchmark's own code keeps working (no peers needed, no timing checked).

The floor and Keel cases run both scenarios in process, through the same timing and
profiling code the real run uses, and the report writes its section without touching the
others. The real run is `bash bench/peers/run.sh --write bench/RESULTS.md`, with the
peers in their own virtual environment (bench/RESULTS.md, "Peers").
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "bench" / "peers"


@pytest.fixture
def peers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, ModuleType]]:
    """The bench/peers modules, imported for this test and forgotten afterwards."""
    monkeypatch.syspath_prepend(str(PEERS.parent))  # results_md
    monkeypatch.syspath_prepend(str(PEERS))
    before = set(sys.modules)
    names = [
        "scenarios",
        "cases",
        "case_floor",
        "case_keel",
        "timing",
        "keel_profile",
        "report",
        "results_md",
    ]
    yield {name: importlib.import_module(name) for name in names}
    for name in set(sys.modules) - before:
        if str(PEERS) in str(getattr(sys.modules[name], "__file__", "") or ""):
            del sys.modules[name]


def test_floor_and_keel_run_both_scenarios(peers: dict[str, ModuleType]) -> None:
    timing, cases = peers["timing"], peers["cases"]
    options = argparse.Namespace(runs=2, warmup=1, block=1, block_warmup=1)
    specs = cases.by_label("floor,keel")

    async def both() -> dict[str, dict[str, dict[str, float]]]:
        return {
            name: await timing.time_scenario(specs, scenario, options)
            for name, scenario in peers["scenarios"].SCENARIOS.items()
        }

    # time_scenario checks every run's answer and tool results, and raises if one is off.
    timings = asyncio.run(both())
    assert set(timings) == {"support", "long"}
    for per_case in timings.values():
        assert set(per_case) == {"floor", "keel"}
        assert all(row["runs"] == 2 and row["us_per_round_trip"] > 0 for row in per_case.values())


@pytest.mark.parametrize("count", [2, 3, 5, 6])
def test_every_case_follows_every_other_equally_often(
    peers: dict[str, ModuleType], count: int
) -> None:
    rows = peers["timing"].orders(count)
    assert all(sorted(row) == list(range(count)) for row in rows)
    pairs = Counter((row[i], row[i + 1]) for row in rows for i in range(count - 1))
    assert len(pairs) == count * (count - 1) and len(set(pairs.values())) == 1
    places = Counter((place, case) for row in rows for place, case in enumerate(row))
    assert len(places) == count * count and len(set(places.values())) == 1


def test_keel_profile_splits_a_whole_turn(peers: dict[str, ModuleType]) -> None:
    scenario = peers["scenarios"].SCENARIOS["support"]
    case = peers["case_keel"].make(scenario)
    profiled = asyncio.run(peers["keel_profile"].profile(case, scenario, 2))
    assert profiled.events > 0 and profiled.calls_per_round_trip > 0
    assert sum(share.share for share in profiled.shares) == pytest.approx(1.0)
    assert dict((s.label, s.share) for s in profiled.shares)["event store"] > 0


OLD = """\
# Benchmarks

Intro kept as it is.

## HTTP

kept numbers

## Peers

old numbers

## Peers: reading the numbers

kept notes
"""


def test_the_report_ranks_peers_and_writes_only_its_section(
    peers: dict[str, ModuleType], tmp_path: Path
) -> None:
    report, cases = peers["report"], peers["cases"]
    per_trip = {"floor": 2.0, "keel": 400.0, "langgraph": 1000.0, "openai-agents": 800.0}
    per_trip |= {"pydantic-ai": 1600.0, "keel, sqlite": 9000.0}
    timings = {
        s: {k: {"us_per_round_trip": v} for k, v in per_trip.items()} for s in ("support", "long")
    }
    probes = {"keel": report.Probe(import_ms=300.0, build_ms=20.0, max_rss_mb=30.0)}
    text = report.table(timings, cases.ALL, probes)
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines()[2:]}
    assert rows["keel"] == ("| keel | 400 | 400 | 200x | 200x | 0.50x | 0.50x | 300 | 20.0 | 30 |")
    assert rows["openai-agents"].split(" | ")[5:7] == ["1.00x", "1.00x"]
    assert rows["floor"].split(" | ")[5] == "0.0025x"
    assert rows["langgraph, InMemorySaver"].startswith("| langgraph, InMemorySaver | - | - |")
    results = tmp_path / "RESULTS.md"
    results.write_text(OLD, encoding="utf-8")
    peers["results_md"].write_section(results, "Peers", text)
    written = results.read_text(encoding="utf-8")
    assert written.count("## Peers\n") == 1 and "old numbers" not in written
    assert "## HTTP\n\nkept numbers" in written
    assert "## Peers: reading the numbers\n\nkept notes" in written
    assert rows["keel"] in written


@pytest.mark.parametrize(
    ("support", "long", "verdict"),
    [
        (108.0, 95.0, "+8.0% (support) and -5.0% (long); goal under 10%: met"),
        (112.0, 101.0, "+12.0% (support) and +1.0% (long); goal under 10%: not met"),
    ],
)
def test_the_summary_says_how_much_telemetry_changes_the_ratio(
    peers: dict[str, ModuleType], support: float, long: float, verdict: str
) -> None:
    report, cases = peers["report"], peers["cases"]
    timings = {
        scenario: {
            "keel": {"us_per_round_trip": 100.0},
            "keel, telemetry on": {"us_per_round_trip": on},
            "openai-agents": {"us_per_round_trip": 900.0},
        }
        for scenario, on in (("support", support), ("long", long))
    }
    text = report.summary(timings, cases.by_label("keel,openai-agents", True), {})
    assert text.endswith(verdict + ".")
    assert "telemetry" not in report.summary(
        {s: {"keel": {"us_per_round_trip": 1.0}} for s in ("support", "long")}, cases.ALL, {}
    )


def test_with_block_medians_the_change_is_also_given_paired_by_rotation(
    peers: dict[str, ModuleType],
) -> None:
    # The medians differ by 14%, but rotation by rotation the two cases moved together:
    # a slow spell (rotations 3-4) fell on both, and paired the change is +5%. The goal
    # needs both under 10%.
    report, cases = peers["report"], peers["cases"]
    off = [100.0, 100.0, 160.0, 160.0, 100.0]
    on = [105.0, 105.0, 168.0, 168.0, 105.0]
    timings = {
        scenario: {
            "keel": {"us_per_round_trip": 100.0, "blocks_us": off},
            "keel, telemetry on": {"us_per_round_trip": 114.0, "blocks_us": on},
            "openai-agents": {"us_per_round_trip": 900.0},
        }
        for scenario in ("support", "long")
    }
    text = report.summary(timings, cases.by_label("keel,openai-agents", True), {})
    assert "changes by +14.0% (support) and +14.0% (long) as a ratio of medians" in text
    assert text.endswith("goal under 10% (both ways): not met.")
    assert "by +5.0% and +5.0% paired by rotation" in text
    for scenario in timings.values():
        scenario["keel, telemetry on"]["us_per_round_trip"] = 108.0
    text = report.summary(timings, cases.by_label("keel,openai-agents", True), {})
    assert text.endswith("goal under 10% (both ways): met.")


def test_the_section_says_how_many_runs_were_timed_and_what_the_telemetry_rows_are(
    peers: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(PEERS))
    run = importlib.import_module("run")
    report = peers["report"]
    options = argparse.Namespace(
        runs=60,
        warmup=10,
        block=10,
        block_warmup=5,
        import_repeats=1,
        rss_runs=0,
        profile_runs=0,
        cases="keel,openai-agents",
        telemetry=True,
    )
    row = {"runs": 100, "us_per_round_trip": 100.0, "median_us": 300.0}
    labels = ("keel", "openai-agents", "keel, metrics on", "keel, telemetry on")
    results = {
        "timings": {s: {label: row for label in labels} for s in ("support", "long")},
        "keel_profile": {},
        "versions": {"python": "3.11"},
    }
    probes = {"python": report.Probe(import_ms=0.0, build_ms=0.0, max_rss_mb=20.0)}
    text = " ".join(run.section(options, ["--telemetry"], results, probes, (0.1, 0.2)).split())
    assert "over 100 timed runs per case after 10 warm-up runs (60 asked for" in text
    assert "`keel, telemetry on` adds tracing" in text
    assert "The last two rows" not in text
