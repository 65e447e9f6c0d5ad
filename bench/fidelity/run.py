"""Fidelity: what Keel sends a real model, next to what gpt-4o was sent, call by call.

    python bench/fidelity/run.py [--file TRANSCRIPTS.jsonl] [--limit N]
        [--minutes-per-turn 3] [--json OUT.json] [--before EARLIER.json LABEL ...]
        [--write bench/RESULTS.md]

Every recorded gpt-4o airline conversation (`../shared/data/tau-bench/airline/
transcripts.jsonl`, 40 of them) is served to examples/airline through a local
OpenAI-compatible server that answers with the recorded replies (bench/fidelity/serve.py);
every body Keel's OpenAI adapter sends is kept and compared with the messages gpt-4o had
been sent before the same reply (bench/fidelity/metrics.py): the share of earlier-turn
tool results and of user texts Keel's request carries, the prompt size of both, and the
mean share of each request that repeats the previous request's prefix, with the engine's
clock moving `--minutes-per-turn` minutes between user turns. It prints the table and,
with `--write`, replaces the "Fidelity" section of the results file (re-read just before
writing, so other sections stay as they are). `--json` saves the measures; `--before FILE
LABEL` (repeatable) reads such a file from an earlier run and shows it as a column. Exits
0 when it measured (goals met or not), 2 when the transcripts cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _path in (ROOT, HERE, ROOT / "bench"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from metrics import (  # noqa: E402
    PREFIX_SOURCE,
    CallComparison,
    compare_call,
    fed_results,
    request_texts,
    turn_of_each,
)
from report import Conversation, Measures, measure, table, verdict  # noqa: E402
from results_md import write_section  # noqa: E402
from serve import AIRLINE, DEFAULT_FILE, read_records, recorded_tools, serve_record  # noqa: E402

from keel.testing.harness import load_definition  # noqa: E402
from keel.testing.openai_wire_server import OpenAIWireServer  # noqa: E402

TITLE = "Fidelity"


async def run_all(
    path: Path, *, limit: int | None, minutes_per_turn: float, verbose: bool
) -> tuple[Measures, list[str]]:
    """Serve every recorded conversation; the measures and the out-of-step notes."""
    definition = load_definition(AIRLINE)
    tools = recorded_tools(path)
    conversations: list[Conversation] = []
    notes: list[str] = []
    with OpenAIWireServer() as server:
        for name, record in read_records(path, limit):
            served = await serve_record(
                server, definition, name, record, minutes_per_turn=minutes_per_turn
            )
            contexts = served.contexts
            calls: list[CallComparison] = []
            served_as: dict[int, str] = {}
            for reply, body in served.pairs:
                served_as.update(fed_results(contexts[reply], body))
                calls.append(compare_call(contexts[reply], tools, body, served_as))
            turns = [turn_of_each(contexts[reply])[-1] for reply, _body in served.pairs]
            if served.problems:
                more = len(served.problems) - 1
                notes.append(
                    f"{name}: {served.problems[0]}"
                    + (f" (and {more} more)" if more else "")
                    + f"; compared {len(served.pairs)} of {len(contexts)} calls"
                )
            conversations.append(
                Conversation(
                    calls=tuple(calls),
                    turns=tuple(turns),
                    keel=tuple(
                        request_texts(r.body.get("messages") or [], r.body.get("tools") or [])
                        for r in served.requests
                    ),
                    keel_messages=tuple(r.message for r in served.requests),
                    recorded=tuple(request_texts(context, tools) for context in contexts),
                    recorded_turns=tuple(turn_of_each(context)[-1] for context in contexts),
                    in_step=not served.problems,
                )
            )
            if verbose:
                print(_line(name, calls), file=sys.stderr)
    return measure(conversations), notes


def _line(name: str, calls: list[CallComparison]) -> str:
    earlier = sum(c.earlier_results for c in calls)
    present = sum(c.earlier_present for c in calls)
    return f"{name}: {len(calls)} calls, earlier-turn tool results {present}/{earlier}"


def _git(*args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _tree() -> str:
    """The commit measured, and whether keel/ or examples/ had uncommitted changes."""
    commit = _git("rev-parse", "--short", "HEAD")
    if not commit:
        return "a tree outside git"
    dirty = _git("status", "--porcelain", "--", "keel", "examples")
    return f"commit {commit}" + (" with uncommitted changes in keel/ or examples/" if dirty else "")


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{os.cpu_count()} CPU(s), {cpu}; Python {platform.python_version()} on "
        f"{platform.system()} {platform.release()}"
    )


def section(
    measures: Measures,
    *,
    argv: list[str],
    minutes: float,
    before: list[tuple[str, dict[str, Any]]],
    notes: list[str],
    seconds: float,
) -> str:
    """The Fidelity section of bench/RESULTS.md."""
    command = shlex.join(["python", "bench/fidelity/run.py", *argv])
    m = measures
    lines = [
        f"Measured on {time.strftime('%Y-%m-%d')}: {_machine()}; {_tree()}; {seconds:.0f} s.",
        "",
        "```sh",
        command,
        "```",
        "",
        f"{m.transcripts} recorded gpt-4o airline conversations served to examples/airline "
        "through a local OpenAI-compatible server answering with the recorded replies (the real "
        f"OpenAI adapter, the engine's clock {minutes:g} minutes later at each customer "
        f"message); {m.in_step} of them stayed in step with the recording. Keel sent "
        f"{m.keel_requests:,} requests (all of them count in the prefix share); the "
        f"{m.calls:,} answered by a recorded reply, in the turn it was recorded in, are "
        "compared with the messages gpt-4o had been sent before that reply "
        "(its column: the recorded requests, `policy.md` and `tools.json`). An earlier-turn "
        "tool result is present when Keel's request holds its own message with the content "
        "Keel's tool gave for that call (this turn's results are matched first). Sizes are "
        "of the request serialised system message first, then the tool schemas, then the "
        "other messages, as compact JSON, tokens estimated as characters / 4. The prefix "
        "share is measured on that text and on the tools-first text of `request_text` "
        "(tools, then messages, the order "
        f"Anthropic caches in); the share function and that text come from {PREFIX_SOURCE}. "
        "See bench/fidelity/README.md.",
        "",
        *table(m, before),
        "",
        verdict(m),
    ]
    if notes:
        lines += ["", "Out of step with the recording:", ""]
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    args_list = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="transcripts JSONL")
    parser.add_argument("--limit", type=int, help="serve only the first N conversations")
    parser.add_argument("--minutes-per-turn", type=float, default=3.0, help="clock step")
    parser.add_argument("--json", type=Path, help="save the measures as JSON")
    parser.add_argument(
        "--before",
        nargs=2,
        action="append",
        default=[],
        metavar=("FILE", "LABEL"),
        help="an earlier run's --json and its column's name (repeatable)",
    )
    parser.add_argument("--verbose", action="store_true", help="one line per conversation")
    parser.add_argument("--write", type=Path, help="update the Fidelity section of this file")
    args = parser.parse_args(args_list)
    try:
        before = [
            (label, json.loads(Path(file).read_text(encoding="utf-8")))
            for file, label in args.before
        ]
        started = time.perf_counter()
        measures, notes = asyncio.run(
            run_all(
                args.file,
                limit=args.limit,
                minutes_per_turn=args.minutes_per_turn,
                verbose=args.verbose,
            )
        )
    except (OSError, ValueError) as exc:
        print(f"cannot measure {args.file}: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    shown = [a for a in args_list if a != "--verbose"]
    body = section(
        measures,
        argv=shown,
        minutes=args.minutes_per_turn,
        before=before,
        notes=notes,
        seconds=seconds,
    )
    print(body)
    if args.json is not None:
        args.json.write_text(json.dumps(measures.as_json(), indent=2) + "\n", encoding="utf-8")
    if args.write is not None:
        write_section(args.write, TITLE, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
