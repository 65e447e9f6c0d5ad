"""Conformance replay of the airline tools: gold tool calls through Keel's tool dispatch.

    python examples/airline/conformance.py [TASKS.jsonl ...] [--task ID ...]

With no file, replays `../shared/data/tau-bench/airline/tasks.jsonl` (next to the repository).
For each task the database is reset to `data/db.json`, every gold call is validated against
the schema Keel offers the model and run as a model's call would be, its model-visible
output is compared with `expected_output`, and after the last call the database hash with
`final_db_hash`. Prints one line per failing task and `N passed, M failed`; exits 0 only
when every task passed. The runner is Keel's `keel.testing.conformance`.

The replay checks the tools against the reference tools, so it runs them with the airline
policy off (`airlinedb.reset(enforce_policy=False)`): five gold tasks (10, 19, 26, 27, 34)
make a call that `policy.md` forbids, which the policy refuses. `check(policy=True)` runs
the same replay with the policy on and so lists them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent
"""The airline project."""

DEFAULT_TASKS = ROOT.parents[2] / "shared" / "data" / "tau-bench" / "airline" / "tasks.jsonl"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import airlinedb  # noqa: E402  (needs the project root on sys.path)

from keel.testing.conformance import ConformanceReport, main, run_conformance  # noqa: E402

REFERENCE_RESET = functools.partial(airlinedb.reset, enforce_policy=False)
"""A fresh database, with the tools behaving as the reference tools (no policy)."""


def check(tasks_file: Path = DEFAULT_TASKS, *, policy: bool = False) -> ConformanceReport:
    """Replay one tasks file against this project and return Keel's report; with `policy`
    the write tools apply the airline policy, as they do in a conversation."""
    reset = airlinedb.reset if policy else REFERENCE_RESET
    return run_conformance(
        project_root=ROOT, tasks_file=tasks_file, reset=reset, db_hash=airlinedb.db_hash
    )


def run(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    default = [DEFAULT_TASKS] if DEFAULT_TASKS.is_file() else []
    return main(
        argv,
        project_root=ROOT,
        reset=REFERENCE_RESET,
        db_hash=airlinedb.db_hash,
        default_files=default,
    )


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
