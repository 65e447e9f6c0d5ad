"""Comparing expected values from a test file with the events and state of a run.

* `same_json`: exact JSON equality, except that numbers compare by value (1 == 1.0) and
  booleans never equal numbers (YAML's `true` is not `1`). Used for memory values.
* `matches`: the looser rule for event fields. Mappings match when every expected key
  matches (extra actual keys are fine), lists item by item with the same length, and a
  string `re:<pattern>` is searched in the actual string; anything else is `same_json`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from keel.events.base import EventBase, to_plain
from keel.testing.conversation.spec import REGEX_PREFIX, EventPattern

_MISSING = object()
_QUIET_FIELDS = frozenset({"timestamp", "metadata"})


def same_json(actual: object, expected: object) -> bool:
    """Exact equality of two JSON values (frozen or plain)."""
    return _equal(to_plain(actual), to_plain(expected), subset=False)


def matches(actual: object, expected: object) -> bool:
    """Whether `actual` matches `expected` under the event-field rule (subset, `re:`)."""
    return _equal(to_plain(actual), to_plain(expected), subset=True)


def _equal(actual: object, expected: object, *, subset: bool) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and actual == expected
    if isinstance(expected, str):
        if subset and expected.startswith(REGEX_PREFIX):
            pattern = expected[len(REGEX_PREFIX) :]
            return isinstance(actual, str) and re.search(pattern, actual) is not None
        return actual == expected
    if isinstance(expected, dict):
        return isinstance(actual, dict) and _equal_mapping(actual, expected, subset=subset)
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_equal(a, e, subset=subset) for a, e in zip(actual, expected, strict=True))
        )
    return actual is None and expected is None


def _equal_mapping(
    actual: Mapping[str, object], expected: Mapping[str, object], *, subset: bool
) -> bool:
    if not subset and actual.keys() != expected.keys():
        return False
    return all(
        key in actual and _equal(actual[key], value, subset=subset)
        for key, value in expected.items()
    )


def event_matches(event: EventBase, pattern: EventPattern) -> bool:
    """Whether `event` is of the pattern's kind and matches each of its fields."""
    if event.kind != pattern.kind:
        return False
    for name, expected in pattern.fields:
        actual = getattr(event, name, _MISSING)
        if actual is _MISSING or not matches(actual, expected):
            return False
    return True


def find_in_order(events: Sequence[EventBase], patterns: Sequence[EventPattern]) -> tuple[int, ...]:
    """Indexes of the earliest in-order matches; shorter than `patterns` when one is missing."""
    found: list[int] = []
    start = 0
    for pattern in patterns:
        index = next(
            (i for i in range(start, len(events)) if event_matches(events[i], pattern)), None
        )
        if index is None:
            break
        found.append(index)
        start = index + 1
    return tuple(found)


def describe_event(event: EventBase, index: int | None = None, *, limit: int = 60) -> str:
    """`#<n> kind field=value ...`: the event's non-default fields, values clipped."""
    parts = [] if index is None else [f"#{index + 1}"]
    parts.append(event.kind)
    for field in dataclasses.fields(event):
        if field.name in _QUIET_FIELDS:
            continue
        value = getattr(event, field.name)
        if value is None or value == () or (isinstance(value, Mapping) and not value):
            continue
        parts.append(f"{field.name}={_clip(repr(to_plain(value)), limit)}")
    return " ".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
