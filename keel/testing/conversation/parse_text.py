"""Parsing expected texts: exact text, or `re:<pattern>` (the pattern must compile)."""

from __future__ import annotations

import re

from keel.testing.conversation.sink import Sink
from keel.testing.conversation.spec import TextExpect


def parse_text(value: object, line: int | None, sink: Sink, what: str) -> TextExpect | None:
    """Exact text or `re:<pattern>` (the pattern must compile)."""
    if not isinstance(value, str):
        sink.error("test.text.invalid", line, f"{what} must be text (quote it)")
        return None
    expect = TextExpect.parse(value)
    if expect.regex and not regex_ok(expect.text, line, sink):
        return None
    return expect


def regex_ok(pattern: str, line: int | None, sink: Sink) -> bool:
    """Whether `pattern` compiles; reports `test.regex.invalid` when it does not."""
    try:
        re.compile(pattern)
    except re.error as exc:
        sink.error("test.regex.invalid", line, f"bad regular expression {pattern!r}: {exc}")
        return False
    return True
