"""The `keel` command."""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from keel import __version__
from keel.source.diagnostics import Diagnostic, has_errors

if TYPE_CHECKING:
    from keel.project.definition import AgentDefinition

app = typer.Typer(
    name="keel",
    help="Keel: a deterministic-first runtime for conversational LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class OutputFormat(StrEnum):
    """How `keel validate` prints its findings."""

    text = "text"
    json = "json"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"keel {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print version.")
    ] = False,
) -> None:
    """Keel: a deterministic-first runtime for conversational LLM agents."""


@app.command()
def validate(
    path: Annotated[Path, typer.Argument(help="Agent project folder.")],
    output: Annotated[
        OutputFormat, typer.Option("--format", help="text (file:line: code: message) or json.")
    ] = OutputFormat.text,
    offline: Annotated[
        bool,
        typer.Option("--offline", help="Do not connect to MCP servers to check their tools."),
    ] = False,
) -> None:
    """Check an agent project; exit 0 when it has no errors, 1 otherwise.

    MCP servers the skills import tools from are connected (local ones started) to check
    that every imported tool exists and can be offered, unless `--offline`. The project's
    own dependencies (`requirements.txt`, `pyproject.toml`) are looked up among the
    packages installed where Keel runs.
    """
    from keel.cli.validate_deps import check_dependencies
    from keel.project.load import load_project

    definition, diagnostics = load_project(path)
    if definition is not None and not offline:
        diagnostics = _with_mcp_checks(definition, diagnostics)
    diagnostics = _ordered([*diagnostics, *check_dependencies(Path(path).resolve())])
    if output is OutputFormat.json:
        typer.echo(json.dumps([d.as_json() for d in diagnostics], indent=2))
    else:
        for d in diagnostics:
            typer.echo(d.render() if d.severity == "error" else f"{d.render()} ({d.severity})")
        errors = sum(1 for d in diagnostics if d.severity == "error")
        warnings = sum(1 for d in diagnostics if d.severity == "warning")
        notes = len(diagnostics) - errors - warnings
        summary = f"{path}: {errors} error(s), {warnings} warning(s)"
        summary += f", {notes} note(s)" if notes else ""
        typer.echo(summary if errors else f"{summary}; project is valid", err=True)
    raise typer.Exit(1 if has_errors(diagnostics) else 0)


def _with_mcp_checks(
    definition: AgentDefinition, diagnostics: list[Diagnostic]
) -> list[Diagnostic]:
    """`diagnostics` plus what connecting the imported MCP servers found (if any)."""
    if not any(skill.mcp_imports for skill in definition.skills.values()):
        return diagnostics
    import asyncio

    from keel.mcp.runtime import check_mcp

    found = asyncio.run(check_mcp(definition))
    return _ordered([*diagnostics, *found])


def _ordered(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """By file, line and code, duplicates dropped (the order `load_project` uses)."""
    merged = list(dict.fromkeys(diagnostics))
    return sorted(merged, key=lambda d: (d.file, d.line or 0, d.code))


def _register_commands() -> None:
    from keel.cli import chat_cmd, graph_cmd, index_cmd, init_cmd, replay_cmd, test_cmd

    init_cmd.register(app)
    chat_cmd.register(app)
    graph_cmd.register(app)
    index_cmd.register(app)
    replay_cmd.register(app)
    test_cmd.register(app)
    try:
        from keel.cli import run_cmd
    except ImportError:  # pragma: no cover - only while the server module is absent
        return
    run_cmd.register(app)


_register_commands()


def main() -> None:
    """Console-script entry point."""
    app()
