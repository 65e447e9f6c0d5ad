"""Plan-cache acceptance benchmark (issue 9): Keel's plan cache against Metnos and GPTCache.

    python bench/plancache/run.py [--turns 15000] [--seed 9] [--embedder minilm|hash]
                                  [--systems none,keel,keel-metnos,metnos,gptcache]
                                  [--lookup-entries 10000] [--write bench/RESULTS.md]

A deterministic world of mock tools (tasks, files, mail, calendar, settings, orders), 51
request families with gold plans, a stream of turns (Zipf popularity, exact / paraphrase /
slot variants, near misses, four catalog and logic changes, scripted feedback), an oracle
planner, and every system run side by side on the same stream in one process. Prints the
tables and, with `--write`, replaces the "Plan cache" section of the results file. See
bench/plancache/README.md for the workload and each metric.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from embed import Embeddings
from gptcache import GptCacheStyle
from harness import Outcome, run_stream
from metnos import MetnosDefault
from metrics import adversarial_total, as_json, pct, upper_bound
from report import (
    adversarial_calls_table,
    adversarial_families_table,
    calls_table,
    examples,
    hits_table,
    reasons,
    replays_table,
    safety_table,
    stale_table,
    success_table,
    unsafe_table,
)
from stream import (
    ADVERSARIAL_NAMES,
    ADVERSARIAL_SHARE,
    BY_NAME,
    Stream,
    build_stream,
    check_families,
)
from systems import NoCache, System
from world import PRINCIPALS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Plan cache"
SYSTEMS = ("none", "keel", "keel-metnos", "metnos", "gptcache")


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=15000, help="turns in the stream")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument(
        "--adversarial",
        type=float,
        default=ADVERSARIAL_SHARE,
        help="share of turns replaced by the adversarial families",
    )
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "hash"))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument(
        "--lookup-entries", type=int, default=10000, help="entries for the lookup timing (0: skip)"
    )
    parser.add_argument("--write", type=Path, help="update the Plan cache section of this file")
    parser.add_argument("--json", type=Path, help="also write every tally's counts here")
    return parser.parse_args(argv)


def _systems(names: Sequence[str], embeddings: Embeddings) -> list[System]:
    built: list[System] = [NoCache()]
    for name in names:
        if name == "keel" or name == "keel-metnos":
            from keel_system import KeelSystem

            from keel.plans.cache import CacheConfig
            from keel.plans.memory_store import MemoryPlanStore

            config = CacheConfig.metnos_defaults() if name == "keel-metnos" else None
            label = "Keel (Metnos presets)" if config else "Keel"
            built.append(KeelSystem(MemoryPlanStore(), name=label, config=config))
        elif name == "metnos":
            built.append(MetnosDefault(embeddings))
        elif name == "gptcache":
            built.append(GptCacheStyle(embeddings))
        elif name != "none":
            raise SystemExit(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    return built


def _say(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def _about(stream: Stream, embeddings: Embeddings, elapsed: float) -> list[str]:
    effectful = sum(1 for t in stream.turns if BY_NAME[t.request.family].effectful)
    n = len(stream.turns)
    adversarial = sum(1 for t in stream.turns if t.request.principal)
    main = len(BY_NAME) - len(ADVERSARIAL_NAMES)
    kinds = {
        k: sum(1 for t in stream.turns if t.request.kind == k)
        for k in ("exact", "paraphrase", "slot", "near_miss")
    }
    return [
        f"{n} turns over {main} families and {len(ADVERSARIAL_NAMES)} adversarial ones "
        f"({adversarial} turns, asked by {len(PRINCIPALS)} signed-in customers; "
        f"{pct_of(effectful, n)} effectful turns), "
        f"{len({t.request.text for t in stream.turns})} distinct request texts; variants: "
        + ", ".join(f"{k} {v}" for k, v in kinds.items())
        + f". Changes at turns {', '.join(f'{c.turn} ({c.name})' for c in stream.changes)}. "
        f"Embedder: {embeddings.name}. Whole run: {elapsed:.0f} s.",
    ]


def pct_of(part: int, whole: int) -> str:
    return f"{100 * part / max(whole, 1):.0f} %"


def _section(argv: list[str], body: list[str]) -> str:
    where = (
        f"Measured on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} CPU(s); Python "
        f"{platform.python_version()} on {platform.system()} {platform.release()}."
    )
    command = shlex.join(["python", "bench/plancache/run.py", *argv])
    return "\n".join([where, "", "```sh", command, "```", "", *body])


def _tables(outcome: Outcome, stream: Stream) -> list[str]:
    tallies = outcome.tallies
    out = ["Model calls (saved = 1 - calls / calls of no cache):", "", *calls_table(tallies)]
    out += ["", "Hits (share of all turns; per variant, share of that variant's turns):", ""]
    out += hits_table(tallies)
    out += ["", "False replays (over served attempts; one-sided 95 % Clopper-Pearson bounds):"]
    out += ["", *safety_table(tallies), ""]
    out += ["Unsafe replays (over served attempts that ran an effectful step):", ""]
    out += unsafe_table(tallies)
    for t in tallies:
        if t.name == "Keel":
            bound = pct(upper_bound(t.unsafe, t.effectful_attempts))
            out += ["", f"Keel served {t.served_effectful} effectful turns from its cache, "]
            out[-1] += f"{t.unsafe} of them unsafe (95 % upper bound {bound})."
    out += ["", "False, unsafe and leaking replays counted apart (an attempt may be all three; "]
    out[-1] += "one-sided 95 % Clopper-Pearson upper bounds), all turns:"
    out += ["", *replays_table(tallies), "", "The adversarial turns only:", ""]
    out += [*replays_table(tallies, adversarial=True), ""]
    out += ["Model calls on the adversarial turns (saved against no cache):", ""]
    out += [*adversarial_calls_table(tallies), ""]
    out += ["Per adversarial family: served attempts / turns: false / unsafe / leaking replays:"]
    out += ["", *adversarial_families_table(tallies)]
    for t in tallies:
        if t.name == "Keel":
            counts = [adversarial_total(t, k) for k in ("false", "unsafe", "leaking")]
            out += ["", f"Keel on the adversarial turns: {counts[0]} false, {counts[1]} unsafe, "]
            out[-1] += f"{counts[2]} leaking replays."
    out += ["", "Stale serves in the 500 turns after each change:", ""]
    out += [*stale_table(tallies, stream), "", *success_table(tallies)]
    return out


async def _main(options: argparse.Namespace) -> tuple[Outcome, Stream, Embeddings, list[str]]:
    problems = check_families()
    if problems:
        raise SystemExit("family tables: " + "; ".join(problems))
    stream = build_stream(options.turns, options.seed, options.adversarial)
    embeddings = Embeddings(options.embedder)
    embeddings.prime(t.request.text for t in stream.turns)
    systems = _systems([s for s in options.systems.split(",") if s], embeddings)
    step = max(1, len(stream.turns) // 10)

    def progress(index: int) -> None:
        if (index + 1) % step == 0:
            _say(f"turn {index + 1}/{len(stream.turns)}")

    outcome = await run_stream(stream, systems, progress)
    extra: list[str] = []
    for tally in outcome.tallies[1:]:
        if tally.reasons:
            extra.append(f"{tally.name} miss/record reasons: {reasons(tally)}.")
    if options.lookup_entries and any(s.startswith("keel") for s in options.systems.split(",")):
        from lookup import lookup_p50

        extra.append(await lookup_p50(options.lookup_entries, stream))
    return outcome, stream, embeddings, extra


def main(argv: list[str]) -> int:
    """Run the benchmark."""
    options = _options(argv)
    started = time.perf_counter()
    outcome, stream, embeddings, extra = asyncio.run(_main(options))
    body = _about(stream, embeddings, time.perf_counter() - started)
    body += ["", *_tables(outcome, stream), "", *extra, "", *examples(outcome.tallies)]
    print("\n".join(body))
    if options.json is not None:
        counts = {"turns": outcome.turns, "systems": [as_json(t) for t in outcome.tallies]}
        options.json.write_text(json.dumps(counts, indent=1, sort_keys=True), encoding="utf-8")
    if options.write is not None:
        path = options.write if options.write.is_absolute() else ROOT / options.write
        write_section(path, TITLE, _section(argv, body))
        print(f"wrote the {TITLE} section of {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
