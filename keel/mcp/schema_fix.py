"""The one place where MCP tool schemas are made fit for model providers (pure).

MCP servers describe a tool's arguments with a JSON schema that providers do not always
accept as a function's `parameters` (OpenAI Agents SDK #449: no `properties`; #404/#4151:
non-object schemas). Every fix Keel applies lives here, and each one is named in
`FixedSchema.fixes`:

* `type` missing on an object-shaped schema (it has `properties` or `required`, or is
  empty) becomes `"object"`; `["object", "null"]` becomes `"object"` (arguments are never
  null);
* `properties` missing becomes `{}`;
* `required` keeps only distinct names that are strings; a required name that
  `properties` does not describe gets an open property (`{}`) so the model is told of it;
* the root's `$schema` and `$id` are dropped (some providers reject them);
* a root without `additionalProperties` (nor `patternProperties`) is closed with
  `additionalProperties: false`, as the schemas of Python tools are: an argument the
  server did not describe is refused as a retryable error (spec §5.4) instead of being
  sent on (servers built on pydantic silently drop it);
* the description falls back to the tool's title, then to a sentence naming the server.

A schema that cannot be offered is `Unusable` and its tool is never offered nor called:
not a JSON object, a root `type` other than object, `properties` that is not a mapping, or
a schema Keel's argument validator cannot compile. A tool name outside the providers'
function-name rule (`^[A-Za-z0-9_-]{1,64}$`) is unusable too (`name_problem`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keel.tools.validators import Unusable, canonical_json, compiled_validator

PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Function names every supported provider accepts."""

_DROPPED_ROOT_KEYS = ("$schema", "$id")


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedSchema:
    """An input schema ready to be offered, and what was changed to get there."""

    parameters: dict[str, Any]
    fixes: tuple[str, ...] = ()


def name_problem(name: str) -> str | None:
    """Why `name` cannot be offered as a function name, or None when it can."""
    if PROVIDER_NAME.fullmatch(name):
        return None
    return "model providers accept only letters, digits, `_` and `-` (at most 64) in tool names"


def describe(description: str | None, title: str | None, name: str, server: str) -> str:
    """The description offered to the model: the tool's own, else its title, else a default."""
    for text in (description, title):
        if text and text.strip():
            return text.strip()
    return f"Tool {name} of the MCP server {server}."


def fix_input_schema(raw: object) -> FixedSchema | Unusable:
    """The schema offered for an MCP tool's `inputSchema`, or why it cannot be offered."""
    if not isinstance(raw, Mapping):
        return Unusable(reason="the input schema is not a JSON object")
    schema: dict[str, Any] = dict(raw)
    fixes: list[str] = []
    problem = _object_type(schema, fixes)
    if problem is not None:
        return Unusable(reason=problem)
    properties = schema.get("properties")
    if properties is None:
        schema["properties"] = properties = {}
        fixes.append("added empty `properties`")
    if not isinstance(properties, Mapping):
        return Unusable(reason="`properties` is not a mapping")
    _required(schema, dict(properties), fixes)
    if "additionalProperties" not in schema and "patternProperties" not in schema:
        schema["additionalProperties"] = False
        fixes.append("closed with `additionalProperties: false`")
    for key in _DROPPED_ROOT_KEYS:
        if key in schema:
            del schema[key]
            fixes.append(f"dropped `{key}`")
    return _compilable(schema, tuple(fixes))


def _object_type(schema: dict[str, Any], fixes: list[str]) -> str | None:
    kind = schema.get("type")
    if kind == "object":
        return None
    if kind is None:
        if set(schema) - {"$schema", "$id", "title", "description", "$defs", "definitions"} and (
            "properties" not in schema and "required" not in schema
        ):
            return "the input schema has no `type: object`"
        schema["type"] = "object"
        fixes.append("added `type: object`")
        return None
    if isinstance(kind, list) and "object" in kind and set(kind) <= {"object", "null"}:
        schema["type"] = "object"
        fixes.append("`type` narrowed to `object`")
        return None
    return f"the input schema's type is {kind!r}, not an object"


def _required(schema: dict[str, Any], properties: dict[str, Any], fixes: list[str]) -> None:
    required = schema.get("required")
    if required is None:
        return
    names = required if isinstance(required, list) else []
    kept = list(dict.fromkeys(n for n in names if isinstance(n, str)))
    if kept != required:
        fixes.append("cleaned `required`")
    missing = [n for n in kept if n not in properties]
    if missing:
        schema["properties"] = {**properties, **{n: {} for n in missing}}
        fixes.append("described required names missing from `properties`")
    if kept:
        schema["required"] = kept
    else:
        del schema["required"]


def _compilable(schema: dict[str, Any], fixes: tuple[str, ...]) -> FixedSchema | Unusable:
    key = canonical_json(schema)
    if key is None:
        return Unusable(reason="the input schema is not JSON")
    validator = compiled_validator(key)
    if isinstance(validator, Unusable):
        return Unusable(reason=f"the input schema cannot be checked ({validator.reason})")
    return FixedSchema(parameters=schema, fixes=fixes)
