"""Conformance replay of the airline tools: gold tool calls through Keel's tool dispatch.

    python examples/airline/conformance.py [TASKS.jsonl ...] [--task ID ...]

With no file, replays `../shared/data/tau-bench/airline/tasks.jsonl` (next to the repository).
For each task the database is reset to `data/db.json`, every gold call is validated against
the schema Keel offers the model and run as a model's call would be, its model-visible
output is compared with `expected_output`, and after the last call the database hash with
`final_db_hash`. Prints one line per failing task and `N passed, M failed`; exits 0 only
when every task passed. The runner is Keel's `keel.testing.conformance`.
"""

from __future__ import annotations

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


def check(tasks_file: Path = DEFAULT_TASKS) -> ConformanceReport:
    """Replay one tasks file against this project and return Keel's report."""
    return run_conformance(
        project_root=ROOT, tasks_file=tasks_file, reset=airlinedb.reset, db_hash=airlinedb.db_hash
    )


def run(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status."""
    default = [DEFAULT_TASKS] if DEFAULT_TASKS.is_file() else []
    return main(
        argv,
        project_root=ROOT,
        reset=airlinedb.reset,
        db_hash=airlinedb.db_hash,
        default_files=default,
    )


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
