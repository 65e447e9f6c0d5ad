"""JSON-schema validators compiled once per schema (fastjsonschema) and kept in a bounded cache.

A schema is identified by its canonical JSON text (sorted keys, compact), so equal schemas
share one compiled validator whoever offers them. Compilation never fetches anything:
`$ref`s to remote documents are refused (fastjsonschema would otherwise `urlopen` them), so
a schema with one is reported as unusable instead of reaching the network.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastjsonschema

Validator = Callable[[Any], Any]
"""A compiled validator: returns when the value is valid, raises when it is not."""

VALIDATOR_CACHE_SIZE = 1024
"""How many compiled (sub-)schemas are kept; least recently used ones are compiled again."""

_REMOTE_SCHEMES = ("", "http", "https", "ftp", "file", "data")


@dataclass(frozen=True, kw_only=True, slots=True)
class Unusable:
    """A schema that cannot be compiled, and why."""

    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """Why a value is invalid: fastjsonschema's dotted name of the spot ("data", "data.x",
    "data[0]"), the sentence after that name, and the rule and schema that failed."""

    name: str
    text: str
    rule: str | None
    definition: object


def canonical_json(schema: object) -> str | None:
    """Sorted-key compact JSON of a plain schema value; None when it is not JSON."""
    try:
        return json.dumps(
            schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError, RecursionError):
        return None


def _refuse_remote(uri: str) -> object:
    raise fastjsonschema.JsonSchemaDefinitionException(
        f"$ref {uri!r} points outside the schema (remote references are not fetched)"
    )


_HANDLERS: dict[str, Callable[[str], Any]] = dict.fromkeys(_REMOTE_SCHEMES, _refuse_remote)


@lru_cache(maxsize=VALIDATOR_CACHE_SIZE)
def compiled_validator(canonical: str) -> Validator | Unusable:
    """The validator for the schema whose canonical JSON text is `canonical` (cached)."""
    try:
        schema = json.loads(canonical)
        # Defaults are not filled in: the tool's own parameter defaults apply instead.
        validator: Validator = fastjsonschema.compile(schema, handlers=_HANDLERS, use_default=False)
    except Exception as exc:  # a bad schema of any kind is reported, never raised
        return Unusable(reason=f"{type(exc).__name__}: {exc}")
    return validator


def check(validator: Validator, value: object) -> Failure | None:
    """None when `value` is valid, else the (first) failure."""
    try:
        validator(value)
    except fastjsonschema.JsonSchemaValueException as exc:
        name = exc.name or "data"
        message = exc.message or ""
        text = message[len(name) :].strip() if message.startswith(name) else message
        return Failure(name=name, text=text, rule=exc.rule, definition=exc.definition)
    except Exception as exc:  # odd Python values can trip generated code; report, never raise
        return Failure(
            name="data",
            text=f"could not be checked ({type(exc).__name__})",
            rule=None,
            definition=None,
        )
    return None
