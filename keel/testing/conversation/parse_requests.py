"""Parsing the checks of a model request: `offered_tools`, `not_offered`, `prompt_contains`,
`prompt_lacks`, `tier` (about the last request), and `request:` (any request, several checks).

    - assert:
        offered_tools: [activate, cannot_help, listen]
        tier: reasoning
        request: {number: 2, not_offered: [listen], prompt_contains: ["## Routing"], tier: router}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from keel.testing.conversation.parse_text import parse_text
from keel.testing.conversation.sink import Sink, line_in
from keel.testing.conversation.spec import Check, RequestCheck

REQUEST_KEYS = ("offered_tools", "not_offered", "prompt_contains", "prompt_lacks", "tier")
"""Checks of one request; at the top of `assert:` they are about the last request."""


def parse_request_key(key: str, raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    """One of `REQUEST_KEYS` at the top of an `assert:` (about the last request)."""
    check = _with(RequestCheck(), key, raw, line, sink)
    return () if check is None else (check,)


def parse_request(raw: object, line: int | None, sink: Sink) -> tuple[Check, ...]:
    """`request: {number?, offered_tools?, not_offered?, prompt_contains?, prompt_lacks?,
    tier?}`."""
    if not isinstance(raw, Mapping) or not raw:
        sink.error("test.assert.request", line, "request takes a mapping of request checks")
        return ()
    check: RequestCheck | None = RequestCheck()
    for key, value in raw.items():
        at = line_in(raw, key, line)
        if key == "number":
            if not isinstance(value, int) or isinstance(value, bool) or value == 0:
                sink.error("test.assert.request", at, "number is a whole number other than 0")
                return ()
            check = dataclasses.replace(check, number=value) if check else None
        elif key in REQUEST_KEYS:
            check = _with(check, str(key), value, at, sink) if check else None
        else:
            known = ", ".join(("number", *REQUEST_KEYS))
            sink.error("test.assert.request", at, f"unknown request check {key!r} ({known})")
            return ()
    return () if check is None else (check,)


def _with(
    check: RequestCheck, key: str, raw: object, line: int | None, sink: Sink
) -> RequestCheck | None:
    """`check` with the check `key` added; None (and a diagnostic) when `raw` is malformed."""
    if key == "tier":
        if not isinstance(raw, str) or not raw.strip():
            sink.error("test.assert.request", line, "tier takes a tier name (router, default, ...)")
            return None
        return dataclasses.replace(check, tier=raw.strip())
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, Sequence) or not items:
        sink.error("test.assert.request", line, f"{key} takes a non-empty list")
        return None
    if key in ("offered_tools", "not_offered"):
        if not all(isinstance(item, str) and item for item in items):
            sink.error("test.assert.request", line, f"{key} takes a list of tool names")
            return None
        names = tuple(str(item) for item in items)
        if key == "offered_tools":
            return dataclasses.replace(check, offered=names)
        return dataclasses.replace(check, not_offered=names)
    errors = len(sink.diagnostics)
    texts = [parse_text(item, line, sink, f"an item of {key}") for item in items]
    found = tuple(text for text in texts if text is not None)
    if len(sink.diagnostics) > errors:
        return None
    if key == "prompt_contains":
        return dataclasses.replace(check, contains=found)
    return dataclasses.replace(check, lacks=found)
