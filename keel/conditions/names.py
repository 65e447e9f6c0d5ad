"""Memory references as they appear in conditions: `session.<namespace>.<entry>`."""

from __future__ import annotations

import re
from dataclasses import dataclass

SESSION = "session"
"""The fixed first segment of every memory reference in a condition."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def is_identifier(text: str) -> bool:
    """True when `text` is a valid reference segment (`[A-Za-z_][A-Za-z0-9_]*`)."""
    return _IDENTIFIER.fullmatch(text) is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Reference:
    """One memory entry named by a condition, written `session.<namespace>.<entry>`.

    `namespace` is a skill id, `project` or `system`; the parser does not check which
    namespaces exist, that is the job of whoever knows the agent project.
    """

    namespace: str
    entry: str

    @property
    def key(self) -> str:
        """The qualified memory key, `namespace.entry`."""
        return f"{self.namespace}.{self.entry}"
