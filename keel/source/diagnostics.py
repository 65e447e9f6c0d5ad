"""Diagnostics: coded, located findings about an agent project.

Every authoring mistake is reported as a `Diagnostic` with a dotted code (for example
`skill.markdown.invalid_frontmatter_delimiter`), the file relative to the project root,
the 1-based line when known, the key it concerns, and a message for a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]
"""`error` fails the project; `warning` and `info` (a note, e.g. a newer place for a key) do not."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnostic:
    """One finding about an agent project."""

    code: str
    """Dotted, stable code, e.g. `memory.undeclared_write`."""
    file: str
    """Path relative to the project root, with forward slashes."""
    line: int | None
    """1-based line in `file`, or None when the finding concerns the whole file."""
    message: str
    """What is wrong, for a person."""
    key: str | None = None
    """The key or name the finding is about, when there is one."""
    severity: Severity = "error"

    def render(self) -> str:
        """`file:line: code: message`, the form `keel validate` prints."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.code}: {self.message}"

    def as_json(self) -> dict[str, object]:
        """The JSON object `keel validate --format json` prints."""
        return {
            "code": self.code,
            "file": self.file,
            "line": self.line,
            "key": self.key,
            "message": self.message,
            "severity": self.severity,
        }


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    """True when any diagnostic is an error (warnings do not fail a project)."""
    return any(d.severity == "error" for d in diagnostics)


def diag(
    code: str,
    file: str,
    line: int | None,
    message: str,
    *,
    key: str | None = None,
    severity: Severity = "error",
) -> Diagnostic:
    """Shorthand constructor used throughout the loaders."""
    return Diagnostic(code=code, file=file, line=line, message=message, key=key, severity=severity)
