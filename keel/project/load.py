"""Load an agent project from disk: the IO entry point of `keel.project`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from keel.project.build import build
from keel.project.definition import AgentDefinition
from keel.project.files import read_dotenv, read_project
from keel.source.diagnostics import Diagnostic
from keel.tools import discover_tools


def project_env(root: Path) -> dict[str, str]:
    """The project's `.env` values with the ambient environment winning."""
    return {**read_dotenv(root), **os.environ}


def load_project(
    path: Path | str, *, env: Mapping[str, str] | None = None
) -> tuple[AgentDefinition | None, list[Diagnostic]]:
    """Read, parse and check the project at `path`.

    Returns the definition (None when there are errors) and every diagnostic, errors and
    warnings, sorted by file and line. Never raises for a broken project.
    """
    root = Path(path).resolve()
    files, diagnostics = read_project(root)
    if files is None:
        return None, diagnostics
    catalog = discover_tools(root)
    definition, more = build(files, catalog, project_env(root) if env is None else env)
    return definition, _merge(diagnostics, more)


def _merge(first: list[Diagnostic], second: list[Diagnostic]) -> list[Diagnostic]:
    unique = list(dict.fromkeys([*first, *second]))
    return sorted(unique, key=lambda d: (d.file, d.line or 0, d.code))
