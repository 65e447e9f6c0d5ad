"""Results of running conversation tests, and how they are printed."""

from __future__ import annotations

from dataclasses import dataclass

from keel.source.diagnostics import Diagnostic


@dataclass(frozen=True, kw_only=True, slots=True)
class CaseResult:
    """The outcome of one test."""

    file: str
    name: str
    passed: bool
    reason: str | None = None
    """Why it failed, on one line: `step 3 (bot, line 14): expected ..., got ...`."""

    details: tuple[str, ...] = ()
    """More lines: further failed checks, the last events of the run."""

    @property
    def test_id(self) -> str:
        """`file::name`."""
        return f"{self.file}::{self.name}"

    def lines(self) -> list[str]:
        """`PASS file::name`, or `FAIL file::name: reason` and indented details."""
        if self.passed:
            return [f"PASS {self.test_id}"]
        return [f"FAIL {self.test_id}: {self.reason}", *(f"    {line}" for line in self.details)]


@dataclass(frozen=True, kw_only=True, slots=True)
class FileResult:
    """The outcome of one test file: its tests, or the diagnostics that stopped it."""

    file: str
    results: tuple[CaseResult, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def passed(self) -> int:
        """Tests that passed."""
        return sum(1 for result in self.results if result.passed)

    @property
    def failed(self) -> int:
        """Tests that failed."""
        return sum(1 for result in self.results if not result.passed)

    @property
    def malformed(self) -> bool:
        """The file could not be used (its diagnostics say why)."""
        return bool(self.diagnostics)

    def lines(self) -> list[str]:
        """Diagnostics (`file:line: code: message`) then one entry per test."""
        rendered = [d.render() for d in self.diagnostics]
        for result in self.results:
            rendered.extend(result.lines())
        return rendered


@dataclass(frozen=True, kw_only=True, slots=True)
class Summary:
    """The outcome of a `keel test` run."""

    files: tuple[FileResult, ...] = ()

    @property
    def passed(self) -> int:
        """Tests that passed, over all files."""
        return sum(file.passed for file in self.files)

    @property
    def failed(self) -> int:
        """Tests that failed, over all files."""
        return sum(file.failed for file in self.files)

    @property
    def malformed(self) -> int:
        """Files that could not be used."""
        return sum(1 for file in self.files if file.malformed)

    @property
    def exit_code(self) -> int:
        """2 when a file is malformed (or there was nothing to run), 1 on a failure, else 0."""
        if self.malformed or not self.files:
            return 2
        return 1 if self.failed else 0

    def final_line(self) -> str:
        """`N passed, M failed` (plus malformed files, when any)."""
        line = f"{self.passed} passed, {self.failed} failed"
        if self.malformed:
            line += f", {self.malformed} malformed file(s)"
        if not self.files:
            line += " (no conversation test files found)"
        return line

    def lines(self) -> list[str]:
        """Everything `keel test` prints, in order."""
        rendered = [line for file in self.files for line in file.lines()]
        return [*rendered, self.final_line()]
