"""Collecting diagnostics while parsing a test file."""

from __future__ import annotations

from keel.source.diagnostics import Diagnostic, diag
from keel.source.yaml import line_of


class Sink:
    """The diagnostics of one test file, all errors (a malformed file runs no test)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.diagnostics: list[Diagnostic] = []

    def error(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record one problem at `line`."""
        self.diagnostics.append(diag(code, self.file, line, message, key=key))


def line_in(container: object, key: object, default: int | None) -> int | None:
    """The line of `key` in a parsed YAML container, else `default`."""
    return line_of(container, key, default)
