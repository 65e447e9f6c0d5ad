"""The one exception tree of Keel.

    KeelError                      root; every exception Keel raises on purpose
    ├── DefinitionError            an agent project cannot be used (carries its diagnostics)
    ├── RunError                   a conversation could not proceed
    ├── StoreError                 persistence failed
    │   └── ConcurrencyConflict    append with a stale expected sequence number
    └── ToolError                  a tool could not be defined or called

Authoring mistakes are not exceptions: they are `Diagnostic` values
(`keel.source.diagnostics`). Exceptions are for programs, diagnostics for people.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.source.diagnostics import Diagnostic


class KeelError(Exception):
    """Root of every exception Keel raises on purpose."""

    code: str = "keel.error"


class DefinitionError(KeelError):
    """An agent project has errors; `diagnostics` says which."""

    code = "keel.definition"

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        first = diagnostics[0].render() if diagnostics else "no diagnostics"
        super().__init__(f"{len(diagnostics)} error(s) in agent project; first: {first}")


class RunError(KeelError):
    """A conversation could not proceed."""

    code = "keel.run"


class StoreError(KeelError):
    """Persistence failed."""

    code = "keel.store"


class ConcurrencyConflict(StoreError):
    """An append named an expected sequence number that is no longer the last one."""

    code = "keel.store.conflict"

    def __init__(self, conversation_id: str, expected: int, actual: int) -> None:
        self.conversation_id = conversation_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"conversation {conversation_id!r}: expected last seq {expected}, found {actual}"
        )


class ToolError(KeelError):
    """A tool could not be defined or called."""

    code = "keel.tool"
