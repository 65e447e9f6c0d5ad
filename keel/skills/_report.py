"""Shared parsing helpers: a diagnostics collector, condition parsing, freezing YAML values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import yaml

from keel.conditions import Condition, ConditionSyntaxError, parse_condition
from keel.project.diagnostics import Diagnostic, Severity, diag
from keel.project.yamlsrc import load_yaml


@dataclass(slots=True)
class Reporter:
    """Collects the diagnostics of one skill file (a parsing scratchpad, not a value)."""

    file: str
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record an error."""
        self._add(code, line, message, key, "error")

    def warning(self, code: str, line: int | None, message: str, *, key: str | None = None) -> None:
        """Record a warning (does not fail the project)."""
        self._add(code, line, message, key, "warning")

    def extend(self, diagnostics: list[Diagnostic]) -> None:
        """Record diagnostics produced elsewhere (e.g. by `load_yaml`)."""
        self.diagnostics.extend(diagnostics)

    def condition(
        self,
        source: object,
        line: int,
        *,
        where: str,
        key: str | None = None,
        column_offset: int | None = None,
    ) -> Condition | None:
        """Parse a condition written at `line`; None (and a diagnostic) when it is bad.

        `source` is whatever YAML produced: a non-string is reported as
        `skill.condition.not_a_string` (quote it), a syntax error under the code the
        condition parser gives. `column_offset` is where the condition starts on its line
        (0-based) when that is known exactly (prose `if:` lines).
        """
        if not isinstance(source, str):
            self.error(
                "skill.condition.not_a_string",
                line,
                f"{where}: a condition must be a string, got {type(source).__name__} "
                f"{source!r} (quote it)",
                key=key,
            )
            return None
        try:
            return parse_condition(source)
        except ConditionSyntaxError as exc:
            if column_offset is None:
                at = f"at column {exc.column + 1} of {source!r}"
            else:
                at = f"at column {column_offset + exc.column + 1}"
            self.error(exc.code, line, f"{where}: {exc.message} ({at})", key=key)
            return None

    def _add(
        self, code: str, line: int | None, message: str, key: str | None, severity: Severity
    ) -> None:
        self.diagnostics.append(diag(code, self.file, line, message, key=key, severity=severity))


def freeze(value: object) -> object:
    """A deep immutable copy of a YAML value: mappings -> MappingProxyType, lists -> tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


def type_name(value: object) -> str:
    """A YAML-ish name for the type of `value`, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__


# PyYAML's constructors raise plain Python errors for some bad scalars (`2001-13-45`,
# `!!int x`, `!!bool maybe`), its reader rejects control characters before `load_yaml`'s
# try block, and it recurses once per nesting level; `load_yaml` lets those escape, and a
# skill file must never make the parser raise.
_YAML_CRASHES = (
    yaml.YAMLError,
    ValueError,
    KeyError,
    AttributeError,
    TypeError,
    RecursionError,
)


def load_yaml_safely(text: str, file: str, line_offset: int) -> tuple[Any, list[Diagnostic]]:
    """`load_yaml`, with the errors it lets escape turned into a `yaml.syntax` diagnostic."""
    try:
        return load_yaml(text, file, line_offset=line_offset)
    except _YAML_CRASHES as exc:
        reason = "nesting too deep" if isinstance(exc, RecursionError) else str(exc)
        return None, [
            diag("yaml.syntax", file, line_offset + 1, f"YAML could not be read: {reason}")
        ]
