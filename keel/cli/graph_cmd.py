"""`keel graph PATH [--highlight skill.block.step]`: print a Mermaid flowchart of the agent.

The text comes from `keel.project.graph.mermaid_graph`: skills, their ordered blocks,
steps, `next:` branches, `call:`s and `link:`s. Paste it into any Mermaid viewer (GitHub
renders a ```mermaid fence). Exit 1 when the project has errors (they are printed on
standard error), 2 when `--highlight` names no step.
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def graph_command(
    path: Annotated[Path, typer.Argument(help="Agent project folder.")],
    highlight: Annotated[
        str | None,
        typer.Option("--highlight", help="Mark one step: <skill>.<block>.<step>."),
    ] = None,
) -> None:
    """Print a Mermaid diagram of the agent's skills, blocks, steps and their links."""
    from keel.project.graph import highlight_node, mermaid_graph
    from keel.project.load import load_project

    definition, diagnostics = load_project(path)
    if definition is None:
        for d in diagnostics:
            if d.severity == "error":
                typer.echo(d.render(), err=True)
        typer.echo(f"{path}: the project has errors; run `keel validate {path}`", err=True)
        raise typer.Exit(1)
    if highlight is not None and highlight_node(definition, highlight) is None:
        typer.echo(
            f"--highlight {highlight}: no such step (write <skill>.<block>.<step>)", err=True
        )
        raise typer.Exit(2)
    typer.echo(mermaid_graph(definition, highlight=highlight), nl=False)


def register(app: typer.Typer) -> None:
    """Add `keel graph` to the `keel` command."""
    app.command(name="graph")(graph_command)
