"""`keel init [PATH] [--template support|tools|voice]`: write a new agent project.

The templates are package data (`keel/cli/templates/<name>/`), copied as they are; a template
with a base (`BASES`: voice is the support agent spoken) holds only the files it changes,
laid over its base's. Every one loads with no errors under `keel validate` and its
conversation tests pass under `keel test PATH/tests`. The target must be a new or an empty folder.
"""

# lazy imports: each command imports what it uses when it runs (`keel --help` loads no server).
from __future__ import annotations

from enum import StrEnum
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated

import typer

SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".keel"})
"""Folders of a template that are never copied (caches a checkout may hold)."""


class Template(StrEnum):
    """The project templates `keel init` writes."""

    support = "support"
    tools = "tools"
    voice = "voice"


BASES = {"voice": "support"}
"""Templates written as their base's files with their own laid over them."""


def template_root(name: str) -> Traversable:
    """The folder of template `name` inside the installed package."""
    return files("keel.cli").joinpath("templates", name)


def template_files(name: str) -> dict[str, bytes]:
    """Relative path (forward slashes) -> content, for every file of template `name` (its
    base's files first, so its own replace them)."""
    found: dict[str, bytes] = template_files(BASES[name]) if name in BASES else {}

    def walk(folder: Traversable, prefix: str) -> None:
        for child in sorted(folder.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                if child.name not in SKIPPED:
                    walk(child, f"{prefix}{child.name}/")
            elif not child.name.endswith((".pyc", ".pyo")):
                found[f"{prefix}{child.name}"] = child.read_bytes()

    walk(template_root(name), "")
    return found


def write_template(name: str, target: Path) -> list[str]:
    """Copy template `name` into `target` (created if missing); returns the files written."""
    written = template_files(name)
    for rel, content in written.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return sorted(written)


def init_command(
    path: Annotated[Path, typer.Argument(help="Folder to create (new or empty).")] = Path("."),
    template: Annotated[
        Template, typer.Option("--template", help="Which project to start from.")
    ] = Template.support,
) -> None:
    """Create a working agent project: skills, a tool, conversation tests and a README."""
    if path.exists() and not path.is_dir():
        typer.echo(f"{path}: is a file; keel init writes into a new or an empty folder", err=True)
        raise typer.Exit(1)
    if path.is_dir() and any(path.iterdir()):
        typer.echo(
            f"{path}: folder is not empty; keel init writes into a new or an empty folder",
            err=True,
        )
        raise typer.Exit(1)
    written = write_template(template.value, path)
    typer.echo(f"Created the {template.value} agent in {path} ({len(written)} files).")
    typer.echo("Next:")
    typer.echo(f"  keel validate {path}")
    typer.echo(f"  keel test {path / 'tests'}")
    typer.echo(f"  keel run {path}")
    typer.echo(f"Then read {path / 'README.md'}.")


def register(app: typer.Typer) -> None:
    """Add `keel init` to the `keel` command."""
    app.command(name="init")(init_command)
