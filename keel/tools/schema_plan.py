"""A tool's argument schema taken apart once, so every problem can be reported in one go.

fastjsonschema stops at the first error. The model should hear about every missing,
unexpected and mistyped argument at once, so the object levels of a schema (`properties`,
`required`, `additionalProperties: false`) are read here and checked in Python, and each
property's own sub-schema gets its own compiled validator (`SchemaNode.key`).

Sub-schemas that use `$ref` carry the root's `$defs` / `definitions` along, so they still
compile on their own. A plan is cached per schema text (bounded).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from keel.tools.validators import Unusable, canonical_json

PLAN_CACHE_SIZE = 256
"""How many root schemas keep their plan."""

MAX_DEPTH = 16
"""Object nesting deeper than this is checked as a whole, not property by property."""

_DEFINITIONS = ("$defs", "definitions")


@dataclass(frozen=True, kw_only=True, slots=True)
class SchemaNode:
    """One (sub-)schema: its validator key and, for object schemas, their parts."""

    key: str
    """Canonical JSON text of the schema (plus the root's definitions when it uses `$ref`)."""
    decomposable: bool = False
    """True when `required` / `properties` / `additionalProperties` are checked in Python."""
    required: tuple[str, ...] = ()
    properties: tuple[tuple[str, SchemaNode], ...] = ()
    closed: bool = False
    """`additionalProperties: false`: names outside `properties` (and patterns) are extra."""
    patterns: tuple[str, ...] = ()
    """`patternProperties` keys: names matching one are not extra."""


@lru_cache(maxsize=PLAN_CACHE_SIZE)
def plan_for(schema_text: str) -> SchemaNode | Unusable:
    """The plan of the schema whose (order-preserving) JSON text is `schema_text` (cached)."""
    try:
        schema = json.loads(schema_text)
        shared = _shared_parts(schema)
        return _node(schema, shared, depth=0)
    except RecursionError:
        return Unusable(reason="the schema is nested too deeply")


def _shared_parts(schema: object) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    return {key: schema[key] for key in ("$schema", *_DEFINITIONS) if key in schema}


def _node(schema: object, shared: dict[str, Any], *, depth: int) -> SchemaNode | Unusable:
    key = canonical_json(_standalone(schema, shared) if depth else schema)
    if key is None:
        return Unusable(reason="the schema is not JSON")
    if not _is_decomposable(schema) or depth >= MAX_DEPTH:
        return SchemaNode(key=key)
    assert isinstance(schema, dict)
    properties: list[tuple[str, SchemaNode]] = []
    raw_properties = schema.get("properties")
    for name, sub in raw_properties.items() if isinstance(raw_properties, dict) else ():
        child = _node(sub, shared, depth=depth + 1)
        if isinstance(child, SchemaNode):
            properties.append((name, child))
    required = schema.get("required")
    patterns = schema.get("patternProperties")
    return SchemaNode(
        key=key,
        decomposable=True,
        required=tuple(n for n in required if isinstance(n, str))
        if isinstance(required, list)
        else (),
        properties=tuple(properties),
        closed=schema.get("additionalProperties") is False,
        patterns=tuple(patterns) if isinstance(patterns, dict) else (),
    )


def _is_decomposable(schema: object) -> bool:
    # `$ref` replaces its siblings (draft 7), so such a level is only checked as a whole.
    return (
        isinstance(schema, dict)
        and "$ref" not in schema
        and (isinstance(schema.get("properties"), dict) or isinstance(schema.get("required"), list))
    )


def _standalone(schema: object, shared: dict[str, Any]) -> object:
    """`schema` able to compile on its own: same draft, and the root's definitions if needed."""
    if not isinstance(schema, dict) or not shared:
        return schema
    wanted = {k: v for k, v in shared.items() if k == "$schema" or _uses_ref(schema)}
    return {**wanted, **schema}


def _uses_ref(value: object) -> bool:
    if isinstance(value, dict):
        return "$ref" in value or any(_uses_ref(item) for item in value.values())
    if isinstance(value, list):
        return any(_uses_ref(item) for item in value)
    return False
