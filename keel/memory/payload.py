"""The `set:` button payload grammar (spec §3.5).

    set:session.<skill_id>.<entry>=<value>
    set:session.project.<entry>=<value>

The value is everything after the first `=`: it may be empty and may itself contain `=`.
Nothing is stripped; the text must match the button payload exactly. Whether the target
may be written, and how the value coerces, is decided elsewhere (`access.check_write`
with writer `button`, `coerce.coerce`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from keel.memory.schema import SYSTEM_NAMESPACE, is_entry_name, qualify

PREFIX: Final = "set:"
SESSION: Final = "session"
_NAMESPACE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True, kw_only=True, slots=True)
class SetPayload:
    """A well-formed `set:` payload."""

    namespace: str
    """`project` or a skill id."""
    entry: str
    value: str
    """The raw text after the first `=`, possibly empty."""

    @property
    def key(self) -> str:
        """The qualified memory key targeted, `namespace.entry`."""
        return qualify(self.namespace, self.entry)

    def render(self) -> str:
        """The payload text again (`format_set_payload`)."""
        return format_set_payload(self.namespace, self.entry, self.value)


@dataclass(frozen=True, kw_only=True, slots=True)
class MalformedPayload:
    """Text that starts with `set:` but does not follow the grammar."""

    text: str
    reason: str


def format_set_payload(namespace: str, entry: str, value: str) -> str:
    """The payload text that writes `value` into `namespace.entry`."""
    return f"{PREFIX}{SESSION}.{qualify(namespace, entry)}={value}"


def _target_problem(target: str) -> str | None:
    """Why `session.<namespace>.<entry>` is malformed, or None when it is fine."""
    parts = target.split(".")
    if len(parts) != 3 or parts[0] != SESSION:
        return f"target {target!r} is not session.<namespace>.<entry>"
    namespace, entry = parts[1], parts[2]
    if namespace == SYSTEM_NAMESPACE:
        return "system memory cannot be set by a button"
    if not _NAMESPACE.match(namespace):
        return f"namespace {namespace!r} is not a skill id or `project`"
    if not is_entry_name(entry):
        return f"entry {entry!r} is not an identifier"
    return None


def parse_set_payload(text: str) -> SetPayload | MalformedPayload | None:
    """Parse a user message as a `set:` payload.

    None when `text` does not start with `set:` (an ordinary message); a
    `MalformedPayload` when it does but breaks the grammar.
    """
    if not text.startswith(PREFIX):
        return None
    target, equals, value = text[len(PREFIX) :].partition("=")
    if not equals:
        return MalformedPayload(text=text, reason="missing `=<value>`")
    problem = _target_problem(target)
    if problem is not None:
        return MalformedPayload(text=text, reason=problem)
    _, namespace, entry = target.split(".")
    return SetPayload(namespace=namespace, entry=entry, value=value)
