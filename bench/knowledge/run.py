"""Knowledge search benchmark: quality (recall@3) and cost (embedding latency, index build).

    python bench/knowledge/run.py [--questions bench/knowledge/questions.yml]
                                  [--write bench/RESULTS.md]

On the agent the question set names (examples/support by default) it measures, in one
process, with the local embedder (all-MiniLM-L6-v2 in numpy):

* model load: constructing the embedder and its first call (weights memory-mapped);
* index build: chunking and embedding every reference chunk into a fresh in-memory index
  (wall clock and this process's CPU time, since other work on the machine shows up in
  the wall clock), chunks and word pieces;
* embedding latency: each question embedded alone (median and 90th percentile), and the
  throughput of batched chunk embedding;
* search latency: one `hits()` call (embed the query, rank, fuse), median;
* recall@1 and recall@3 of hybrid (the default), BM25-only and vector-only search on every
  question and on the held-out ones; unanswerable questions answered with no hit.

It prints a markdown section and, with `--write`, puts it in the "Knowledge search"
section of bench/RESULTS.md (re-reading the file just before writing and touching only that
section, since other benchmarks write theirs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from textwrap import fill

from keel.embeddings.local import LocalEmbedder
from keel.knowledge.build import chunk_all
from keel.knowledge.evaluate import Quality, QuestionSet, load_question_set, measure
from keel.knowledge.service import ProjectKnowledge
from keel.knowledge.sources import read_documents
from keel.knowledge.store import InMemoryIndexStore
from keel.testing.harness import load_definition

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for results_md
from results_md import write_section

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Knowledge search"
MODES = ("hybrid", "bm25", "vector")


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{os.cpu_count()} CPU(s), {cpu}; Python {platform.python_version()} on "
        f"{platform.system()} {platform.release()}"
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _measure(questions: QuestionSet) -> dict[str, object]:
    definition = load_definition(ROOT / questions.agent)
    started, cpu = time.perf_counter(), time.process_time()
    embedder = LocalEmbedder()
    embedder.encode(["warm up"])
    load = (time.perf_counter() - started, time.process_time() - cpu)
    chunks = chunk_all(read_documents(definition.root), definition.config.references.chunking)
    tokens = sum(embedder.token_count(c.search_text) for c in chunks)
    knowledge = ProjectKnowledge(
        root=definition.root,
        name="bench",
        chunking=definition.config.references.chunking,
        embedder=embedder,
        store=InMemoryIndexStore(),
    )
    started, cpu = time.perf_counter(), time.process_time()
    report = await knowledge.prepare()
    build = (time.perf_counter() - started, time.process_time() - cpu)
    texts = [q.text for q in questions.questions]
    single, single_cpu = [], []
    for text in texts:
        t, c = time.perf_counter(), time.process_time()
        embedder.encode([text])
        single.append(time.perf_counter() - t)
        single_cpu.append(time.process_time() - c)
    t = time.perf_counter()
    embedder.encode([c.search_text for c in chunks])
    batched = time.perf_counter() - t
    searches = []
    for text in texts:
        t = time.perf_counter()
        await knowledge.hits(text)
        searches.append(time.perf_counter() - t)
    quality = {}
    for mode in MODES:
        for k in (1, 3):
            quality[(mode, k)] = await measure(knowledge, questions, mode=mode, k=k)  # type: ignore[arg-type]
    return {
        "load": load,
        "build": build,
        "chunks": report.chunks,
        "tokens": tokens,
        "single": single,
        "single_cpu": single_cpu,
        "batched": batched,
        "searches": searches,
        "quality": quality,
    }


def _held_out(questions: QuestionSet, result: Quality) -> str:
    held = [q.text for q in questions.questions if q.group == "heldout"]
    if not held:
        return "-"
    found = sum(text not in result.missed for text in held)
    return f"{found}/{len(held)} = {found / len(held):.3f}"


def _section(questions: QuestionSet, m: dict[str, object], argv: list[str], load: float) -> str:
    command = shlex.join(["python", "bench/knowledge/run.py", *argv])
    quality: dict[tuple[str, int], Quality] = m["quality"]  # type: ignore[assignment]
    single: list[float] = m["single"]  # type: ignore[assignment]
    single_cpu: list[float] = m["single_cpu"]  # type: ignore[assignment]
    searches: list[float] = m["searches"]  # type: ignore[assignment]
    build: tuple[float, float] = m["build"]  # type: ignore[assignment]
    model_load: tuple[float, float] = m["load"]  # type: ignore[assignment]
    chunks, tokens = int(m["chunks"]), int(m["tokens"])  # type: ignore[call-overload]
    rows = []
    for mode in MODES:
        one, three = quality[(mode, 1)], quality[(mode, 3)]
        rows.append(
            f"| {mode} | {one.recall:.3f} | {three.found}/{three.total} = {three.recall:.3f} | "
            f"{_held_out(questions, three)} | {three.silent}/{three.unanswerable} |"
        )
    missed = quality[("hybrid", 3)].missed
    intro = (
        f"Measured on {time.strftime('%Y-%m-%d')}: {_machine()} (1-minute load average "
        f"{load:.2f} just before the run: other work on the machine shows up in wall-clock "
        "times; CPU times are this process's own)."
    )
    about = (
        f"Agent `{questions.agent}`: {chunks} chunks ({tokens:,} word pieces) from its "
        f"`references/`; {len(questions.questions)} labelled questions "
        f"({sum(q.group == 'heldout' for q in questions.questions)} held out: written after "
        "the ranking was fixed) and "
        f"{len(questions.unanswerable)} unanswerable ones in `bench/knowledge/questions.yml`. "
        "A question is found when one of its expected sections is among the first k hits."
    )
    misses = f"Hybrid misses at 3: {', '.join(repr(q) for q in missed) or 'none'}."
    lines = [
        fill(intro, 92),
        "",
        "```sh",
        command,
        "```",
        "",
        fill(about, 92),
        "",
        "| search | recall@1 | recall@3 | recall@3 held out | unanswerable with no hit |",
        "| --- | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        fill(misses, 92),
        "",
        "| cost (local embedder, numpy, one thread) | value |",
        "| --- | ---: |",
        f"| model load + first call | {_ms(model_load[0])} ms |",
        f"| embedding one sentence, median (p90); CPU median | "
        f"{_ms(statistics.median(single))} ms ({_ms(_percentile(single, 0.9))} ms); "
        f"{_ms(statistics.median(single_cpu))} ms |",
        f"| embedding chunks in batches | {chunks / float(m['batched']):.1f} chunks/s, "  # type: ignore[arg-type]
        f"{tokens / float(m['batched']):,.0f} word pieces/s |",  # type: ignore[arg-type]
        f"| index build, {chunks} chunks (wall / CPU) | {build[0]:.2f} s / {build[1]:.2f} s |",
        f"| search (embed query + rank), median | {_ms(statistics.median(searches))} ms |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "bench/knowledge/questions.yml")
    parser.add_argument("--write", type=Path, help="Put the section into this RESULTS.md.")
    options = parser.parse_args(argv)
    questions = load_question_set(options.questions)
    load = os.getloadavg()[0]
    measured = asyncio.run(_measure(questions))
    shown = [a for a in argv if a != "--write" and a != str(options.write)]
    body = _section(questions, measured, [*shown, "--write", "bench/RESULTS.md"], load)
    print(body)
    if options.write is not None:
        write_section(options.write, TITLE, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
