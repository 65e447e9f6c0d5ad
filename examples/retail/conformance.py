"""Conformance replay of the retail tools against the τ-bench gold calls.

    .venv/bin/python examples/retail/conformance.py TASKS.jsonl [TASKS.jsonl ...] [--task ID]

Run from anywhere (paths are taken as given). With no file it replays the shared retail
files, `../shared/data/tau-bench/retail/tasks.jsonl` and `tasks_dev.jsonl` beside the
repository, those that exist. Every task starts from a fresh copy of `data/db.json`; each
gold call goes through Keel's tool dispatch (the project is loaded as `keel run` loads it,
the arguments are validated against the schema the model is offered, the tool runs with a
real tool context) and the text the model would see must equal `expected_output`; the
database hash after the last call must equal `final_db_hash`. Prints a line per failing
task and `N passed, M failed`; exits 0 only when every task passed (see
`keel.testing.conformance`).
"""

from __future__ import annotations

import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent
SHARED = PROJECT.parents[2] / "shared" / "data" / "tau-bench" / "retail"
DEFAULT_FILES = tuple(
    path for path in (SHARED / "tasks.jsonl", SHARED / "tasks_dev.jsonl") if path.exists()
)

if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

import retaildb  # noqa: E402  (the project's own package, the one its tools import)

from keel.testing.conformance import main  # noqa: E402


def run(argv: list[str] | None = None) -> int:
    """The command line, returning the exit code."""
    return main(
        argv,
        project_root=PROJECT,
        reset=retaildb.reset,
        db_hash=retaildb.db_hash,
        default_files=DEFAULT_FILES,
    )


if __name__ == "__main__":
    sys.exit(run())
