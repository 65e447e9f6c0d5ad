"""Helpers shared by the project-loader tests."""

from __future__ import annotations

import textwrap
from typing import Any

from keel.source.diagnostics import Diagnostic
from keel.source.yaml import load_yaml


def yaml_data(text: str, file: str = "test.yml") -> Any:
    """Parse dedented YAML with line-aware containers; fails on YAML errors."""
    data, diagnostics = load_yaml(textwrap.dedent(text), file)
    assert diagnostics == [], diagnostics
    return data


def codes(diagnostics: list[Diagnostic]) -> list[tuple[str, int | None]]:
    """(code, line) of each diagnostic, in order."""
    return [(d.code, d.line) for d in diagnostics]


def only(diagnostics: list[Diagnostic], code: str) -> Diagnostic:
    """The single diagnostic with `code`."""
    found = [d for d in diagnostics if d.code == code]
    assert len(found) == 1, [d.render() for d in diagnostics]
    return found[0]
