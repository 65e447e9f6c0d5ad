"""The airline policy on real model behaviour: the 40 recorded gpt-4o runs replayed through
`examples/airline`, whose tools enforce the airline policy and whose writes wait for the
customer's yes.

    .venv/bin/python bench/airline_policy/run.py [--write] [--transcripts FILE]

For runs whose recorded reward is 1: the share that still end on the task's gold database
hash (no false refusals). For runs whose reward is 0: how many writes the policy stopped
(refused by a rule, declined at the confirmation, refused before sign-in), how many of
those are not among the task's gold actions, and how many runs now end on the gold hash.
Twice: with Keel's confirmation answered from the recorded customer's message (the
replay's rule, `examples/airline/replay_writes.py`), and with every question answered yes
(the rules alone). Also: the gold calls of all 50 tasks that the policy refuses.
`--write` rewrites the "Airline policy replay" section of `bench/RESULTS.md`.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
REPO = BENCH.parent
EXAMPLE = REPO / "examples" / "airline"
sys.path.insert(0, str(BENCH))

from results_md import write_section  # noqa: E402

TITLE = "Airline policy replay"


def _script(name: str) -> ModuleType:
    module_name = f"keel_example_airline_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True, kw_only=True, slots=True)
class Summary:
    """The numbers of one replay of the transcripts."""

    successes: int
    successes_at_gold: int
    successes_stopped: int
    failures: int
    failures_at_gold_recorded: int
    failures_at_gold_now: int
    writes: int
    stopped: Counter[str]
    stopped_not_gold: int
    stopped_in_gold: list[str]
    by_code: Counter[str]
    rows: list[tuple[str, str, str, str, str]]


def summarise(report: Any, gold_actions: dict[int, list[dict[str, Any]]]) -> Summary:
    in_gold = _script("replay_writes").in_gold
    wins = [o for o in report.outcomes if o.reward == 1]
    losses = [o for o in report.outcomes if o.reward != 1]
    stopped: Counter[str] = Counter()
    by_code: Counter[str] = Counter()
    stopped_in_gold: list[str] = []
    not_gold = writes = 0
    rows: list[tuple[str, str, str, str, str]] = []
    for outcome in losses:
        writes += len(outcome.writes)
        for attempt in outcome.stopped:
            stopped[attempt.outcome] += 1
            by_code[attempt.code or attempt.outcome] += 1
            if in_gold(attempt, gold_actions.get(outcome.task_id, [])):
                stopped_in_gold.append(f"{outcome.name}: {attempt.describe()}")
            else:
                not_gold += 1
        codes = Counter(a.code for a in outcome.stopped)
        rows.append(
            (
                outcome.name.split(" (")[0],
                "yes" if outcome.expected_hash == outcome.gold_hash else "no",
                ", ".join(f"{c} x{n}" if n > 1 else str(c) for c, n in codes.items()) or "-",
                "yes" if outcome.at_gold else "no",
                ", ".join(w.tool for w in outcome.writes if w.outcome == "ran") or "-",
            )
        )
    return Summary(
        successes=len(wins),
        successes_at_gold=sum(1 for o in wins if o.at_gold),
        successes_stopped=sum(1 for o in wins if o.intervened),
        failures=len(losses),
        failures_at_gold_recorded=sum(1 for o in losses if o.expected_hash == o.gold_hash),
        failures_at_gold_now=sum(1 for o in losses if o.at_gold),
        writes=writes,
        stopped=stopped,
        stopped_not_gold=not_gold,
        stopped_in_gold=stopped_in_gold,
        by_code=by_code,
        rows=rows,
    )


def gold_of(tasks: Path) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {}
    for line in tasks.read_text(encoding="utf-8").splitlines():
        if line.strip():
            task = json.loads(line)
            found[int(str(task["id"]).rsplit("-", 1)[-1])] = list(task["actions"])
    return found


def _machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _numbers(label: str, s: Summary) -> list[str]:
    share = 100 * s.successes_at_gold / s.successes if s.successes else 0.0
    return [
        f"**{label}**",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| reward-1 runs ending on the gold hash | {s.successes_at_gold} of {s.successes} "
        f"({share:.0f}%); with a write stopped: {s.successes_stopped} |",
        f"| reward-0 runs | {s.failures} |",
        f"| their write calls | {s.writes} |",
        f"| writes the policy stopped | {sum(s.stopped.values())} ("
        + ", ".join(f"{k} {v}" for k, v in sorted(s.stopped.items()))
        + ") |",
        f"| of those, not among the task's gold actions | {s.stopped_not_gold} |",
        "| stopped, by rule | "
        + (", ".join(f"`{k}` {v}" for k, v in sorted(s.by_code.items())) or "-")
        + " |",
        f"| reward-0 runs on the gold hash as recorded | {s.failures_at_gold_recorded} |",
        f"| reward-0 runs on the gold hash now | {s.failures_at_gold_now} |",
        "",
    ]


def render(words: Summary, rules: Summary, conflicts: list[str], command: str) -> str:
    lines = [
        f"Measured {datetime.date.today().isoformat()} on {_machine()}, with",
        f"`{command}`. The 40 recorded gpt-4o runs of τ-bench airline tasks 0-9",
        "(`../shared/data/tau-bench/airline/transcripts.jsonl`) replayed through",
        "`examples/airline` (Keel's engine, `ReplayModel`), whose tools enforce the airline",
        "policy and whose six write tools wait for the customer's yes to a confirmation",
        'question (see the README\'s "The policy and where it is enforced"). The recorded',
        "customer never heard that question: with confirmations *from the recorded words*",
        "the replay answers yes when the customer's message the call followed agrees or asks",
        'for it ("yes", "proceed", "go ahead", "please downgrade ..."), no otherwise ("I\'ll go',
        'with the first option"); with *every confirmation yes* only the rules act. After a',
        "stopped write the replay goes on with the recorded replies, which were written for",
        'the result the recording had: the model cannot adapt, so "now on the gold hash" is',
        "what the policy alone achieves, not what a model reading the refusal would.",
        "",
    ]
    lines += _numbers("Confirmations answered from the recorded words", words)
    lines += _numbers("Every confirmation answered yes (the rules alone)", rules)
    if words.stopped_in_gold or rules.stopped_in_gold:
        lines += ["Stopped writes that are gold actions:", ""]
        lines += [f"- {item}" for item in (*words.stopped_in_gold, *rules.stopped_in_gold)]
        lines.append("")
    lines += [
        "Reward-0 runs, confirmations from the recorded words:",
        "",
        "| run | recorded on gold | stopped | now on gold | writes that ran |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {' | '.join(row)} |" for row in words.rows]
    lines += [
        "",
        "Gold calls of the 50 airline tasks that the policy refuses (the conformance replay",
        "runs the tools without the policy for that reason):",
        "",
    ]
    lines += [f"- {item}" for item in conflicts] or ["- none"]
    lines += [
        "",
        "(10: a cancellation of an economy reservation without insurance booked weeks ago;",
        "19: new flights to JFK for a trip to LGA; 26 and 27: a cancellation of a trip already",
        "flown; 34: a cancellation of an uninsured economy reservation right after its upgrade",
        "from basic economy.)",
        "",
        "Where the policy cannot help: a write the rules allow and the customer agreed to, but",
        "not the one the task wanted. In these recordings: flights other than the cheapest or",
        "fastest the customer asked for (task 6 trials 1-3, task 3 trials 0-2), a credit card",
        "where the customer preferred a gift card (task 4 trials 0 and 3), only some of the",
        "changes asked for (task 2 trials 0 and 3: two of five downgrades; task 3 trial 3 and",
        "task 5 trial 0: no bags or passenger change), and runs that never made the gold write",
        "(tasks 1, 8 and 9 mostly). No rule can tell a wrong flight the customer chose from a",
        "right one; only the task can. The stopped writes are all ones the gold does not",
        "contain (overcharged bags, two certificates in one booking, a destination changed",
        "from PHL to EWR, a booking or change made with no yes), but the replayed model does",
        "not read the refusal and try again, so no failed run reaches the gold state here; a",
        "live model would get the refusal's reason (for example the bag count it must charge).",
    ]
    return "\n".join(lines) + "\n"


def _conflict(outcome: Any) -> str:
    for failure in outcome.failures:
        found = re.search(r"Error: (policy\.\w+)", failure.message)
        if failure.call_index is not None and found:
            return f"{outcome.task_id}: call {failure.call_index} ({failure.tool}), `{found[1]}`"
    return f"{outcome.task_id}: " + "; ".join(f.message for f in outcome.failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    replay = _script("replay")
    parser.add_argument("--transcripts", default=str(replay.DEFAULT_FILE))
    parser.add_argument("--write", action="store_true", help="rewrite the RESULTS.md section")
    args = parser.parse_args(argv)
    path = Path(args.transcripts)
    gold = gold_of(path.with_name("tasks.jsonl"))
    words = summarise(replay.check(path), gold)
    rules = summarise(replay.check(path, approve_all=True), gold)
    conformance = _script("conformance")
    report = conformance.check(path.with_name("tasks.jsonl"), policy=True)
    conflicts = [_conflict(o) for o in report.failures]
    command = ".venv/bin/python bench/airline_policy/run.py --write"
    text = render(words, rules, conflicts, command)
    print(text)
    if args.write:
        write_section(BENCH / "RESULTS.md", TITLE, text)
    ok = words.successes_at_gold == words.successes and rules.successes_at_gold == rules.successes
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
