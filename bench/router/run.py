"""Offline router accuracy on the retail agent, next to a keyword baseline.

    python bench/router/run.py [--write bench/RESULTS.md]

Loads examples/retail, routes every message of bench/router/utterances.yml (113 messages
written for this bench, none of them in a skill's `examples:`) among the skills eligible in
its state, with the local embedder (all-MiniLM-L6-v2), and prints top-1 accuracy, what the
configured threshold and margin do (routed right / routed wrong / asked), the same for the
keyword baseline, the time to embed one sentence, and the time to build the skill index.
With `--write` the table replaces the "Router" section of the results file (re-read just
before writing, so other sections stay as they are).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from evaluate import (  # noqa: E402
    embedding_latency_ms,
    load_cases,
    score_keywords,
    score_router,
)

from keel.embeddings.local import LocalEmbedder  # noqa: E402
from keel.routing.index import build_index  # noqa: E402
from keel.testing.harness import load_definition  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section  # noqa: E402

TITLE = "Router"


def _row(name: str, score: object) -> str:
    s = score
    return (
        f"| {name} | {s.cases} | {s.accuracy:.1%} | {s.routed_right} | {s.routed_wrong} | "  # type: ignore[attr-defined]
        f"{s.unsure} |"  # type: ignore[attr-defined]
    )


async def measure() -> str:
    definition = load_definition(ROOT / "examples" / "retail")
    config = definition.config.offline.router
    embedder = LocalEmbedder()
    cases = load_cases(definition)
    latency = embedding_latency_ms(embedder, [c.text for c in cases])
    started = time.perf_counter()
    await build_index(embedder, tuple(s.document for s in definition.skills.values()))
    build_ms = (time.perf_counter() - started) * 1000
    router, misses = await score_router(definition, embedder, cases, config)
    keywords = score_keywords(definition, cases, config)
    lines = [
        f"Measured on {time.strftime('%Y-%m-%d')}: {os.cpu_count()} CPU(s); Python "
        f"{platform.python_version()} on {platform.system()} {platform.release()}.",
        "",
        "```sh",
        "python bench/router/run.py --write bench/RESULTS.md",
        "```",
        "",
        f"{len(cases)} labelled messages for examples/retail (bench/router/utterances.yml, none "
        "in a skill's `examples:`), each routed among the skills eligible in its state (10 "
        "once signed in, 2 before). Top-1: the best-scored skill is the labelled one. With "
        f"the default threshold {config.threshold} and margin {config.margin} (applied to each "
        "router's own scores) a message is routed (right or wrong) or the router is unsure "
        "(defers to the model, or asks with buttons when there is none).",
        "",
        "| router | messages | top-1 accuracy | routed right | routed wrong | unsure |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        _row("offline (all-MiniLM-L6-v2)", router),
        _row("keyword baseline", keywords),
        "",
        f"Embedding one sentence (local embedder, numpy, one thread): median {latency[0]:.1f} ms, "
        f"p95 {latency[1]:.1f} ms. Building the skill index (embedding every skill's texts "
        f"once, cached per project and embedder afterwards): {build_ms:.0f} ms.",
        "",
        "Ranked wrong by the offline router: "
        + ("; ".join(f'"{c.text}" ({c.label} -> {got})' for c, got in misses) or "none")
        + ".",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="results file to update (Router section)")
    args = parser.parse_args()
    body = asyncio.run(measure())
    print(body)
    if args.write is not None:
        write_section(args.write, TITLE, body)


if __name__ == "__main__":
    main()
