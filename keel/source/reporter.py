"""A diagnostics collector for one file, and typed readers for YAML values.

The readers take a parsed mapping and a key, check the value's type, report a coded
diagnostic at the key's line when it is wrong, and return a usable value (the default
when the value is missing or wrong), so a parser can carry on and report everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from keel.source.diagnostics import Diagnostic, Severity, diag
from keel.source.suggest import did_you_mean
from keel.source.yaml import line_of, own_line


@dataclass(slots=True)
class Reporter:
    """Collects the diagnostics of one file (a parsing scratchpad, not a value)."""

    file: str
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record an error."""
        self.add(code, line, message, key=key, severity="error")

    def warning(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record a warning (does not fail the project)."""
        self.add(code, line, message, key=key, severity="warning")

    def info(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record a note (does not fail the project; e.g. a key has a newer place)."""
        self.add(code, line, message, key=key, severity="info")

    def add(
        self, code: str, line: int | None, message: str, *, key: str | None, severity: Severity
    ) -> None:
        """Record a diagnostic in this reporter's file."""
        self.diagnostics.append(diag(code, self.file, line, message, key=key, severity=severity))

    def extend(self, diagnostics: list[Diagnostic]) -> None:
        """Record diagnostics produced elsewhere (e.g. by `load_yaml`)."""
        self.diagnostics.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        """True when an error (not only warnings) was recorded."""
        return any(d.severity == "error" for d in self.diagnostics)


def key_line(container: Any, key: Any) -> int | None:
    """Line of `key` in a parsed mapping/list, falling back to the container's own line."""
    return line_of(container, key, own_line(container))


def is_number(value: object) -> bool:
    """True for int and float, but not bool (YAML `true` is not a number)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def read_str(
    r: Reporter, data: Any, key: str, code: str, *, where: str = "", required: bool = False
) -> str | None:
    """A non-empty string at `data[key]`, or None (reported when wrong or required)."""
    value = data.get(key) if isinstance(data, dict) else None
    name = f"{where}{key}"
    if value is None:
        if required:
            r.error(code, key_line(data, key), f"`{name}` is required", key=name)
        return None
    if not isinstance(value, str) or not value.strip():
        r.error(code, key_line(data, key), f"`{name}` must be a non-empty string", key=name)
        return None
    return value


def read_positive(
    r: Reporter, data: Any, key: str, code: str, *, default: float, where: str = ""
) -> float:
    """A number > 0 at `data[key]`, or `default` (reported when wrong)."""
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return default
    if not is_number(value) or value <= 0:
        name = f"{where}{key}"
        r.error(code, key_line(data, key), f"`{name}` must be a number above 0, got {value!r}")
        return default
    return float(value)


def read_positive_int(
    r: Reporter, data: Any, key: str, code: str, *, default: int | None, where: str = ""
) -> int | None:
    """An integer > 0 at `data[key]`, or `default` (reported when wrong)."""
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        name = f"{where}{key}"
        r.error(code, key_line(data, key), f"`{name}` must be a whole number above 0")
        return default
    return value


def warn_unknown_keys(
    r: Reporter, data: Any, known: frozenset[str], code: str, *, where: str, hint: str = ""
) -> list[Any]:
    """Warn once per key of `data` that is not in `known`; returns those keys."""
    if not isinstance(data, dict):
        return []
    unknown = [k for k in data if k not in known]
    for k in unknown:
        message = f"unknown key `{where}{k}` is ignored{hint}" + did_you_mean(str(k), known)
        r.warning(code, key_line(data, k), message, key=f"{where}{k}")
    return unknown
