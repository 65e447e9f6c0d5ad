"""Memory values: starting values and how a value shows in a prompt (spec §3.2, §2.4, §11.2)."""

from __future__ import annotations

import json
from typing import Final

from keel.memory.frozen import thaw
from keel.memory.schema import MemoryField, MemorySchema

PII_MARKER: Final = "[set]"
"""What a set PII value looks like in a prompt."""
UNSET_MARKER: Final = "(not set)"
"""What an unset value looks like in a prompt."""


def initial_values(schema: MemorySchema, namespace: str) -> dict[str, object]:
    """Qualified key -> initial value (None when not declared) for every field of
    `namespace`; applied on skill (re)activation and, for `project`, at session start.

    Values are fresh copies: changing a returned list does not touch the declaration.
    """
    return {field.key: thaw(field.initial_value) for field in schema.fields_of(namespace)}


def _stringify(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(thaw(value), ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def render_for_prompt(field: MemoryField, value: object) -> str:
    """`value` of `field` as the LLM sees it: `[set]` for PII, `(not set)` for None,
    text as is, booleans `true`/`false`, lists and objects as JSON."""
    if value is None:
        return UNSET_MARKER
    if field.pii:
        return PII_MARKER
    return _stringify(value)
