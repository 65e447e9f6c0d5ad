"""The two exceptions of the condition language.

`ConditionSyntaxError` is raised by `parse_condition`; whoever loads an agent project turns
it into a `Diagnostic` (authoring mistakes are never exceptions for people).
`Unreadable` is raised by a memory reader for a reference the caller may not read; the
evaluator never lets it escape, it turns it into `Outcome.CLOSED`.
"""

from __future__ import annotations

from typing import Final

from keel.conditions.names import Reference
from keel.errors import KeelError

SYNTAX: Final = "condition.syntax"
UNKNOWN_NAME: Final = "condition.unknown_name"
BAD_REFERENCE: Final = "condition.bad_reference"
EMPTY: Final = "condition.empty"
UNSUPPORTED: Final = "condition.unsupported"

ERROR_CODES: Final = frozenset({SYNTAX, UNKNOWN_NAME, BAD_REFERENCE, EMPTY, UNSUPPORTED})
"""Every code a `ConditionSyntaxError` can carry."""


class ConditionSyntaxError(KeelError):
    """A condition's text is not a valid expression of the condition language.

    `code` is one of `ERROR_CODES`, `message` is for a person and `column` is the 0-based
    offset into the source text where the problem starts.
    """

    def __init__(self, code: str, message: str, column: int) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.column = column


class Unreadable(KeelError):
    """Raised by a memory reader for a reference the caller is not allowed to read."""

    code = "condition.unreadable"

    def __init__(self, reference: Reference | None = None, reason: str = "not readable") -> None:
        where = f"session.{reference.key}" if reference is not None else "memory reference"
        super().__init__(f"{where}: {reason}")
        self.reference = reference
        self.reason = reason
