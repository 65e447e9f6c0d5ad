"""Memory placeholders in response text and the `set:` button payload grammar.

Placeholders are `{session.<namespace>.<entry>}` or the short `{entry}` (own skill first,
then project). Anything else in braces is plain text, except dotted names that look like
a placeholder but are not one of the two forms (`{session.project}`), which the response
loader reports. A `set:` payload is `set:session.<namespace>.<entry>=<value>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CANDIDATE = re.compile(rf"\{{({_NAME}(?:\.{_NAME})*)\}}")
_QUALIFIED = re.compile(rf"session\.({_NAME})\.({_NAME})")
_SHORT = re.compile(_NAME)
_SET = re.compile(rf"set:session\.({_NAME})\.({_NAME})=(.+)", re.DOTALL)

SET_PREFIX = "set:"

Lookup = Callable[[str | None, str], str | None]
"""`lookup(namespace, entry)` -> text for the placeholder, or None to leave it as written.
`namespace` is None for the short `{entry}` form."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Placeholder:
    """One `{session.<ns>.<entry>}` or `{entry}` in a response."""

    namespace: str | None
    """None for the short `{entry}` form."""
    entry: str
    raw: str
    """As written, braces included."""
    line: int | None


@dataclass(frozen=True, kw_only=True, slots=True)
class SetPayload:
    """A parsed `set:session.<namespace>.<entry>=<value>` button payload."""

    namespace: str
    entry: str
    value: str
    """The value as written (it is coerced to the field type when tapped)."""
    line: int | None

    @property
    def key(self) -> str:
        """The qualified memory key, `namespace.entry`."""
        return f"{self.namespace}.{self.entry}"


def find_placeholders(text: str, line: int | None) -> tuple[list[Placeholder], list[str]]:
    """Placeholders in `text`, and the malformed lookalikes (as written)."""
    found: list[Placeholder] = []
    malformed: list[str] = []
    for match in _CANDIDATE.finditer(text):
        placeholder = _placeholder(match, line)
        if placeholder is not None:
            found.append(placeholder)
        else:
            malformed.append(match.group(0))
    return found, malformed


def fill_placeholders(text: str, lookup: Lookup) -> str:
    """Replace each placeholder with `lookup`'s text; unresolved ones stay as written."""
    return fill_checked(text, lookup)[0]


def fill_checked(text: str, lookup: Lookup) -> tuple[str, tuple[str, ...]]:
    """`fill_placeholders`, and the placeholders it left as written, in order (found while
    filling, so braces inside a filled value never count)."""
    unfilled: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        placeholder = _placeholder(match, None)
        if placeholder is None:
            return match.group(0)
        value = lookup(placeholder.namespace, placeholder.entry)
        if value is None:
            unfilled.append(match.group(0))
            return match.group(0)
        return value

    return _CANDIDATE.sub(substitute, text), tuple(unfilled)


def parse_set_payload(payload: str, line: int | None) -> SetPayload | None:
    """The parsed payload, or None when it starts with `set:` but breaks the grammar."""
    match = _SET.fullmatch(payload)
    if match is None or not match.group(3).strip():
        return None
    return SetPayload(
        namespace=match.group(1), entry=match.group(2), value=match.group(3), line=line
    )


def _placeholder(match: re.Match[str], line: int | None) -> Placeholder | None:
    body = match.group(1)
    qualified = _QUALIFIED.fullmatch(body)
    if qualified is not None:
        namespace, entry = qualified.group(1), qualified.group(2)
        return Placeholder(namespace=namespace, entry=entry, raw=match.group(0), line=line)
    if _SHORT.fullmatch(body) and body != "session":
        return Placeholder(namespace=None, entry=body, raw=match.group(0), line=line)
    return None
