"""Check a model's tool-call arguments against the schema it was offered, reporting every problem.

    arguments, problems = validate_arguments(definition, call.arguments)
    if problems:
        reply = retryable_error_text(definition.name, problems)   # the tool does not run

Raw JSON text is parsed (blank or None means `{}`); a mapping is taken as already parsed.
Missing required and unexpected arguments are found from the schema's object levels, each
present argument is checked against its own sub-schema (nested objects are taken apart the
same way), and only when all that passes is the whole object checked (for anything else:
`allOf`, `minProperties`, ...); arguments that pass the whole schema are not taken apart.
Validators are compiled once per schema and cached (`keel.tools.validators`,
`keel.tools.schema_plan`), and a read-only schema object keeps its plan, so a tool offered
call after call is not serialised again. Nothing here raises, whatever the input.

Problems come in a fixed order: by kind (json, missing, extra, type, schema); within a kind,
in schema order (required list, then properties), unexpected names sorted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import orjson

from keel.tools.definition import ToolDefinition
from keel.tools.frozen import thaw_json
from keel.tools.schema_plan import SchemaNode, plan_for
from keel.tools.validators import Failure, Unusable, check, compiled_validator

ProblemKind = Literal["missing", "extra", "type", "json", "schema"]

_KIND_ORDER: dict[str, int] = {"json": 0, "missing": 1, "extra": 2, "type": 3, "schema": 4}
_MAX_MESSAGE = 300
_MAX_LISTED = 12


@dataclass(frozen=True, kw_only=True, slots=True)
class ArgumentProblem:
    """One thing wrong with a tool call's arguments."""

    kind: ProblemKind
    """missing (required, absent), extra (not allowed), type (a value does not fit its
    schema), json (not a JSON object), schema (anything else, or an unusable schema)."""
    path: str
    """Where: `order_id`, `address.zip`, `items[2]`; empty for the arguments as a whole."""
    message: str
    """A short sentence for the model, e.g. "argument 'count' must be integer"."""


def validate_arguments(
    target: ToolDefinition | Mapping[str, object],
    raw: str | Mapping[str, object] | None,
) -> tuple[dict[str, object] | None, tuple[ArgumentProblem, ...]]:
    """Parse and check `raw` against a tool's schema (or a JSON schema); never raises.

    Returns the parsed arguments (a plain JSON dict) and the problems. The arguments are
    None only when `raw` is not a JSON object; they are also returned when they have schema
    problems (for the record of a refused call), so test `problems`, not the arguments.
    """
    parsed = _parse(raw)
    if isinstance(parsed, ArgumentProblem):
        return None, (parsed,)
    plan = _plan(target)
    if isinstance(plan, Unusable):
        return parsed, (_unusable(plan),)
    if _valid_whole(plan, parsed):
        return parsed, ()  # the usual case: nothing to take apart
    problems = _object_problems(plan, parsed, "") if plan.decomposable else []
    if not problems:
        problems = _whole_problems(plan, parsed)
    return parsed, tuple(sorted(problems, key=lambda p: _KIND_ORDER[p.kind]))


def retryable_error_text(tool_name: str, problems: tuple[ArgumentProblem, ...]) -> str:
    """The model-visible error for a refused call: every problem, and that it may retry."""
    messages: list[str] = []
    for problem in sorted(problems, key=lambda p: _KIND_ORDER.get(p.kind, len(_KIND_ORDER))):
        if problem.message not in messages:
            messages.append(problem.message)
    listed = messages[:_MAX_LISTED]
    if len(messages) > len(listed):
        listed.append(f"and {len(messages) - len(listed)} more problem(s)")
    head = f"Invalid arguments for tool '{tool_name}'"
    body = f"{head}: {'; '.join(listed)}." if listed else f"{head}."
    return f"{body} The tool did not run; call it again with corrected arguments."


def _parse(raw: object) -> dict[str, object] | ArgumentProblem:
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        value = _quick_loads(raw)
        if value is _NOT_QUICK:
            try:
                # `json.loads` with these options, decoder made once (a BOM gets its message).
                if raw.startswith("\ufeff"):
                    value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
                else:
                    value = _ARGUMENTS.decode(raw)
            except (ValueError, RecursionError) as exc:
                return _json_problem(f"arguments are not valid JSON ({_clip(str(exc), 120)})")
    elif isinstance(raw, Mapping):
        try:
            # A round trip leaves plain JSON only (read-only mappings, tuples, enums...).
            thawed = thaw_json(raw)
            value = json.loads(json.dumps(thawed, allow_nan=False))
        except (TypeError, ValueError, RecursionError) as exc:
            return _json_problem(f"arguments must be JSON values ({_clip(str(exc), 120)})")
        if value != thawed:  # json.dumps turned non-string keys into strings
            return _json_problem("arguments must be JSON values (object keys must be strings)")
    else:
        return _json_problem(f"arguments must be a JSON object, not {type(raw).__name__}")
    if not isinstance(value, dict):
        return _json_problem(f"arguments must be a JSON object, not {_json_kind(value)}")
    return value


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"number {text[:20]} is out of range")
    return number


_ARGUMENTS = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)

_NOT_QUICK = object()
_LONG_NUMBER = re.compile(r"\d{19}")


def _quick_loads(raw: str) -> object:
    """What `_ARGUMENTS.decode(raw)` returns, by orjson, for the text orjson reads the
    same way; `_NOT_QUICK` for the rest, which the standard library reads (and words
    the error of): orjson refuses what the options refuse (NaN, infinities, numbers
    beyond a float's range) and lone surrogates, which Python reads, and reads integers
    beyond 64 bits as floats (so any run of 19 digits goes the slow way)."""
    if _LONG_NUMBER.search(raw) is not None:
        return _NOT_QUICK
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _NOT_QUICK


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    return "null" if value is None else "a number"


def _json_problem(message: str) -> ArgumentProblem:
    return ArgumentProblem(kind="json", path="", message=message)


def _valid_whole(plan: SchemaNode, value: dict[str, object]) -> bool:
    """Whether `value` passes the whole schema: then taking it apart finds nothing either
    (each part is checked against the same sub-schemas and definitions)."""
    validator = compiled_validator(plan.key)
    return not isinstance(validator, Unusable) and check(validator, value) is None


_PLAN_OF_SCHEMA_SIZE = 1024
"""How many read-only schema objects keep their plan by identity."""

_plan_of_schema: dict[int, tuple[Mapping[str, object], SchemaNode | Unusable]] = {}
"""A read-only schema object's plan, by identity (the object is kept, so its id is not
reused): a tool's schema is read-only and offered call after call."""


def _plan(target: ToolDefinition | Mapping[str, object]) -> SchemaNode | Unusable:
    schema = target.parameters if isinstance(target, ToolDefinition) else target
    known = _plan_of_schema.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    try:
        text = json.dumps(
            thaw_json(schema), separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError, RecursionError):
        return Unusable(reason="the schema is not JSON")
    plan = plan_for(text)
    if type(schema) is MappingProxyType:  # a plain dict could change under the same id
        if len(_plan_of_schema) >= _PLAN_OF_SCHEMA_SIZE:
            _plan_of_schema.clear()
        _plan_of_schema[id(schema)] = (schema, plan)
    return plan


def _unusable(plan: Unusable) -> ArgumentProblem:
    message = f"the tool's argument schema cannot be used ({_clip(plan.reason, 160)})"
    return ArgumentProblem(kind="schema", path="", message=message)


def _object_problems(
    node: SchemaNode, value: dict[str, object], path: str
) -> list[ArgumentProblem]:
    problems = [
        ArgumentProblem(kind="missing", path=p, message=f"missing required argument '{p}'")
        for p in (_join(path, name) for name in node.required if name not in value)
    ]
    problems.extend(
        ArgumentProblem(kind="extra", path=p, message=f"unexpected argument '{p}'")
        for p in (_join(path, name) for name in sorted(value) if _is_extra(node, name))
    )
    for name, child in node.properties:
        if name in value:
            problems.extend(_value_problems(child, value[name], _join(path, name)))
    return problems


def _is_extra(node: SchemaNode, name: str) -> bool:
    if not node.closed or any(name == known for known, _ in node.properties):
        return False
    return not any(_matches(pattern, name) for pattern in node.patterns)


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return True  # an unreadable pattern is left to the whole-object check


def _value_problems(node: SchemaNode, value: object, path: str) -> list[ArgumentProblem]:
    validator = compiled_validator(node.key)
    if isinstance(validator, Unusable):
        return []  # cannot stand alone (e.g. a $ref into the root); the whole check covers it
    failure = check(validator, value)
    if failure is None:
        return []
    if node.decomposable and isinstance(value, dict):
        nested = _object_problems(node, value, path)
        if nested:
            return nested
    return [_from_failure("type", path, failure)]


def _whole_problems(node: SchemaNode, value: dict[str, object]) -> list[ArgumentProblem]:
    validator = compiled_validator(node.key)
    if isinstance(validator, Unusable):
        return [_unusable(validator)]
    failure = check(validator, value)
    return [] if failure is None else [_from_failure("schema", "", failure)]


def _from_failure(kind: ProblemKind, base: str, failure: Failure) -> ArgumentProblem:
    suffix = failure.name[len("data") :] if failure.name.startswith("data") else ""
    path = base + suffix if base else suffix.removeprefix(".")
    subject = f"argument '{path}'" if path else "arguments"
    text = _alternatives(failure) or failure.text
    return ArgumentProblem(kind=kind, path=path, message=_clip(f"{subject} {text}"))


def _alternatives(failure: Failure) -> str | None:
    """'must be string or null' for an anyOf of plain types (fastjsonschema says less)."""
    definition = failure.definition
    if failure.rule != "anyOf" or not isinstance(definition, dict):
        return None
    members = definition.get("anyOf")
    kinds: list[str] = []
    for member in members if isinstance(members, list) else ():
        if not isinstance(member, dict) or set(member) - {"type", "description", "title"}:
            return None
        declared = member.get("type")
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            return None
        kinds.extend(name for name in names if name not in kinds)
    return f"must be {' or '.join(kinds)}" if kinds else None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _clip(text: str, limit: int = _MAX_MESSAGE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
