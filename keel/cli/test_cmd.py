"""`keel test PATH...`: run conversation test files (format: docs/testing.md).

Prints `PASS file::name` or `FAIL file::name: reason` per test, diagnostics for malformed
files, and `N passed, M failed`. Exit 0 when all pass, 1 on a failure, 2 on a malformed
test file (or when no test file was found).
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from keel.testing.conversation.runner import HarnessFactory


def load_harness_factory() -> HarnessFactory:
    """`keel.testing.harness.make_harness`, imported only when tests run."""
    from keel.testing.harness import make_harness

    return make_harness


def test_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Test files or folders (searched for YAML with `tests:`).", exists=True
        ),
    ],
    agent: Annotated[
        Path | None,
        typer.Option("--agent", help="Agent project for files that name none and sit in none."),
    ] = None,
    name_filter: Annotated[
        str | None, typer.Option("-k", help="Run only tests whose name contains this text.")
    ] = None,
) -> None:
    """Run conversation tests; exit 1 on a failure, 2 on a malformed test file."""
    from keel.testing.conversation.runner import run_paths

    summary = run_paths(paths, load_harness_factory(), default_agent=agent, name_filter=name_filter)
    for line in summary.lines():
        typer.echo(line)
    raise typer.Exit(summary.exit_code)


def register(app: typer.Typer) -> None:
    """Add `keel test` to the `keel` command."""
    app.command(name="test")(test_command)
