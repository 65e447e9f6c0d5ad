"""Peer benchmark: Keel next to LangGraph, the OpenAI Agents SDK and Pydantic AI.

    python bench/peers/run.py [--runs 200] [--warmup 20] [--block 10] [--block-warmup 5]
                              [--rss-runs 100]
                              [--import-repeats 5] [--cases floor,keel,...]
                              [--telemetry] [--write bench/RESULTS.md]

Each framework runs the same two scenarios (scenarios.py) with a scripted, zero-latency
model: "support" (two tool calls, then the answer: 3 model round trips) and "long" (ten
tool calls, then the answer: 11). The floor is a hand-written loop (case_floor.py).

1. `setup.sh` creates bench/peers/.venv (Keel editable plus the pinned peers) when it is
   missing or out of date; everything below runs with that interpreter.
2. Import and build time: for each framework, `--import-repeats` fresh processes each
   import it and build the agent once (probe.py); the median is reported.
3. Peak RSS: one fresh process per framework imports it, builds both scenarios and runs
   each `--rss-runs` times; `ru_maxrss` at the end.
4. Speed: one process (timing.py) with every case, runs interleaved in blocks, median
   per case; µs per model round trip = median run / round trips. Keel's time is also
   split by stage from a profile (keel_profile.py).

It prints the table and, with `--write`, puts it in the "Peers" section of the file.
`--telemetry` adds the row "keel, telemetry on": Keel with tracing and metrics on, spans
exported over OTLP/HTTP to a receiver in another process (case_keel.py, otlp_sink.py).
Standard library only: any Python 3.11 can run it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from textwrap import fill

from cases import MAIN, by_label
from report import Probe, breakdown, summary, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PYTHON = HERE / ".venv" / "bin" / "python"
WIDTH = 92


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="timed runs per case, scenario")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs per case first")
    parser.add_argument("--block", type=int, default=10, help="runs in a row per case")
    parser.add_argument("--block-warmup", type=int, default=5, help="untimed runs per block")
    parser.add_argument("--rss-runs", type=int, default=100, help="runs per scenario, RSS")
    parser.add_argument("--import-repeats", type=int, default=5, help="fresh processes")
    parser.add_argument("--profile-runs", type=int, default=40, help="Keel profile runs")
    parser.add_argument("--cases", help="comma-separated case labels (default: all)")
    parser.add_argument("--write", type=Path, help="update the Peers section of this file")
    parser.add_argument(
        "--telemetry", action="store_true", help="add Keel with tracing and metrics on"
    )
    return parser.parse_args(argv)


def _child(*args: str) -> str:
    done = subprocess.run(
        [str(PYTHON), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def _probe(label: str, options: argparse.Namespace) -> Probe:
    probe = str(HERE / "probe.py")
    starts = [json.loads(_child(probe, "import", label)) for _ in range(options.import_repeats)]
    rss = json.loads(_child(probe, "rss", label, "--runs", str(options.rss_runs)))
    return Probe(
        import_ms=statistics.median(s["import_ms"] for s in starts),
        build_ms=statistics.median(s["build_ms"] for s in starts),
        max_rss_mb=rss["max_rss_mb"],
    )


def _timings(options: argparse.Namespace) -> dict[str, object]:
    args = [str(HERE / "timing.py"), "--runs", str(options.runs), "--warmup", str(options.warmup)]
    args += ["--block", str(options.block), "--block-warmup", str(options.block_warmup)]
    args += ["--profile-runs", str(options.profile_runs)]
    if options.cases:
        args += ["--cases", options.cases]
    if options.telemetry:
        args.append("--telemetry")
    done = subprocess.run([str(PYTHON), *args], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit("timing.py failed (its errors are above)")
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _machine() -> str:
    cpu = platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} shared cores ({cpu}), {platform.system()} {platform.release()}"


def _revision() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "keel")
    return f"Keel at {head}" + (" plus uncommitted changes under keel/" if dirty else "")


def _versions(found: dict[str, str]) -> str:
    order = ["python", "langgraph", "langgraph-prebuilt", "langchain-core", "openai-agents"]
    order += ["openai", "pydantic-ai-slim", "pydantic", "fastjsonschema"]
    return ", ".join(f"{name} {found[name]}" for name in order if name in found)


METHOD = (
    "Every framework runs the same two scenarios with a scripted model that answers at "
    "once: *support* (two `lookup` tool calls, then the answer: 3 model round trips) and "
    "*long* (ten, then the answer: 11). One round trip is one scripted model reply consumed "
    "and acted on. The tool is the same trivial async function everywhere; each framework "
    "validates its arguments its own way (Keel and the floor: JSON schema; the peers: "
    "pydantic). `µs/rt` is the median time of a run (one user message handled to the final "
    "answer) divided by its round trips, over {runs} timed runs per case after {warmup} "
    "warm-up runs ({asked} asked for, rounded up to whole squares). All cases run in one "
    "process, interleaved in blocks of {block} timed runs "
    "(each after {block_warmup} untimed ones), so a busy spell of the shared machine hits "
    "every case alike; the blocks' orders form a balanced Latin square, every case coming "
    "right after every other equally often (a case run just after a heavy one is slower for "
    "a few runs). Import and "
    "build (compile the graph, make the agent, load Keel's project) are medians of "
    "{repeats} fresh processes; peak RSS is `ru_maxrss` of a fresh process that ran each "
    "scenario {rss} times (a bare Python with asyncio: {baseline:.0f} MB). Keel runs "
    "`bench/peers/keel_agent` through `Engine.handle` with `ScriptedModel` over the "
    "in-memory event store (the peers keep nothing by default), and again persisting to a "
    "SQLite file (`keel, sqlite`, Keel's default store), in a conversation whose session "
    "has already started; both are compared with the fastest peer in memory. The rows "
    "`langgraph, InMemorySaver` and `openai-agents, tracing on` are variants (LangGraph with "
    "its in-memory checkpointer; the Agents SDK with tracing on but no exporter): shown, not "
    "counted as the fastest peer. "
    "The floor is a hand-written loop: plain dicts, direct calls, fastjsonschema."
)

TELEMETRY_METHOD = (
    " `keel, metrics on` is the Keel case with a telemetry tap as the engine's observer, each "
    "run counted into the metrics; `keel, telemetry on` adds tracing as `keel run` does with "
    "`OTEL_EXPORTER_OTLP_ENDPOINT` set: each run inside a request span, its spans written as "
    "OTLP protobuf and posted in batches by Keel's exporting thread to a receiver in another "
    "process (`otlp_sink.py`)."
)


SPLIT = (
    "Where Keel's time goes, per round trip: {runs} more runs per scenario under cProfile; "
    "each function's own time goes to the area of its file (a built-in's to its caller's), "
    "and the shares are applied to the unprofiled median above. Approximate: profiling "
    "slows small Python functions more than C code."
)


def section(
    options: argparse.Namespace,
    argv: list[str],
    results: dict[str, object],
    probes: dict[str, Probe],
    load: tuple[float, float],
) -> str:
    """The body of the Peers section."""
    specs = by_label(options.cases, options.telemetry)
    timings = results["timings"]
    where = (
        f"Measured on {time.strftime('%Y-%m-%d')}: {_machine()}; other work ran on the "
        f"machine (1-minute load average {load[0]:.2f} before, {load[1]:.2f} after). "
        f"{_revision()}. "
        f"Versions: {_versions(results['versions'])}."  # type: ignore[arg-type]
    )
    timed = {row["runs"] for rows in timings.values() for row in rows.values()}  # type: ignore[attr-defined]
    method = METHOD.format(
        runs=", ".join(str(int(n)) for n in sorted(timed)) or options.runs,
        asked=options.runs,
        warmup=options.warmup,
        block=options.block,
        block_warmup=options.block_warmup,
        repeats=options.import_repeats,
        rss=options.rss_runs,
        baseline=probes["python"].max_rss_mb if "python" in probes else 0.0,
    )
    if options.telemetry:
        method += TELEMETRY_METHOD
    command = shlex.join(["bash", "bench/peers/run.sh", *argv])
    parts = [_fill(where), "", "```sh", command, "```", "", _fill(method), ""]
    parts.append(table(timings, specs, probes))  # type: ignore[arg-type]
    parts += ["", summary(timings, specs, results["keel_profile"])]  # type: ignore[arg-type]
    splits = _splits(results)
    if splits:
        parts += ["", _fill(SPLIT.format(runs=options.profile_runs))]
        for split in splits:
            parts += ["", split]
    return "\n".join(parts)


def _splits(results: dict[str, object]) -> list[str]:
    """Where the time goes, for each of Keel's profiled cases."""
    profiles = results["keel_profile"]
    found = [
        breakdown(profile, results["timings"], label)  # type: ignore[arg-type]
        for label, profile in profiles.items()  # type: ignore[attr-defined]
    ]
    return [split for split in found if split]


def _fill(text: str) -> str:
    return fill(text, WIDTH, break_on_hyphens=False)


def main(argv: list[str]) -> int:
    """Set up the peers' venv if needed, measure, print, and write when asked."""
    options = _options(argv)
    subprocess.run(["bash", str(HERE / "setup.sh")], check=True)
    before = os.getloadavg()[0]
    specs = by_label(options.cases, options.telemetry)
    probes: dict[str, Probe] = {}
    # Keel on SQLite imports and builds what Keel in memory does: probed once, as "keel".
    for label in ["python", *(s.label for s in specs if s in MAIN and not s.options)]:
        print(f"probing {label}...", file=sys.stderr)
        if label == "python":
            rss = json.loads(_child(str(HERE / "probe.py"), "rss", "python"))
            probes[label] = Probe(import_ms=0.0, build_ms=0.0, max_rss_mb=rss["max_rss_mb"])
        else:
            probes[label] = _probe(label, options)
    results = _timings(options)
    load = (before, os.getloadavg()[0])
    print(table(results["timings"], specs, probes))  # type: ignore[arg-type]
    print()
    print(summary(results["timings"], specs, results["keel_profile"]))  # type: ignore[arg-type]
    for split in _splits(results):
        print()
        print(split)
    if options.write is not None:
        path = options.write if options.write.is_absolute() else ROOT / options.write
        write_section(path, "Peers", section(options, argv, results, probes, load))
        print(f"wrote the Peers section of {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
