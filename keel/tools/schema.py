"""A tool function's signature -> the JSON schema object of its LLM-visible arguments.

The parameter named `context` is injected by the engine and left out. Parameters with a
default are optional (the default is recorded when it is JSON); a `None` default makes the
type nullable. `*args` / `**kwargs` and positional-only parameters cannot be passed by name
and are definition errors. Descriptions come from the docstring's `Args:` section
(Google style).

Each parameter's type hint becomes its JSON schema, what the LLM is told the tool accepts.
Supported: str, int, float, bool, None, Any / unannotated (`{}`, anything), list / set /
Sequence, tuple (homogeneous or fixed), dict / Mapping with str keys, Literal (enum), Enum
subclasses (enum of values), Optional / `X | None` (nullable type list), other unions
(`anyOf`), TypedDict and dataclasses (nested objects, `additionalProperties: false`), and
`Annotated[T, "description"]`. Anything else is a `ToolDefinitionError` naming the parameter.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keel.tools.definition import ToolDefinitionError

Schema = dict[str, Any]

# The signature.

CONTEXT_PARAM = "context"
"""The parameter the engine fills with the `ToolContext`; never shown to the LLM."""

_UNNAMEABLE = {
    inspect.Parameter.VAR_POSITIONAL: "*{} is not allowed (tools are called with named arguments)",
    inspect.Parameter.VAR_KEYWORD: "**{} is not allowed (tools are called with named arguments)",
    inspect.Parameter.POSITIONAL_ONLY: "{} is positional-only (tools are called by name)",
}


class UnresolvedAnnotation(ToolDefinitionError):
    """An annotation names something not defined (yet) in the tool's module."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ParameterSchema:
    """What a signature says about a tool's arguments."""

    parameters: Schema
    """JSON schema object: properties, required, additionalProperties false."""
    context_param: str | None
    param_names: tuple[str, ...]


def function_parameters(func: Callable[..., Any]) -> ParameterSchema:
    """Derive the argument schema of `func` (raises `ToolDefinitionError`)."""
    name = getattr(func, "__name__", repr(func))
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"cannot read the signature: {exc}", function=name) from exc
    descriptions = parse_arg_descriptions(inspect.getdoc(func))
    properties: dict[str, Schema] = {}
    required: list[str] = []
    context_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in _UNNAMEABLE:
            message = _UNNAMEABLE[param.kind].format(param.name)
            raise ToolDefinitionError(message, function=name, parameter=param.name)
        if param.name == CONTEXT_PARAM:
            context_param = param.name
            continue
        properties[param.name] = _parameter_schema(func, param, descriptions.get(param.name))
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    parameters: Schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ParameterSchema(
        parameters=parameters, context_param=context_param, param_names=tuple(properties)
    )


def _parameter_schema(
    func: Callable[..., Any], param: inspect.Parameter, description: str | None
) -> Schema:
    annotation = resolve_annotation(func, param.name, param.annotation)
    schema = type_schema(annotation, parameter=param.name)
    if param.default is not inspect.Parameter.empty:
        if param.default is None:
            schema = make_nullable(schema)
        ok, value = json_default(param.default)
        if ok:
            schema = {**schema, "default": value}
    if description and "description" not in schema:
        schema = {**schema, "description": description}
    return schema


def resolve_annotation(func: Callable[..., Any], name: str, annotation: object) -> object:
    """Evaluate one parameter's annotation (string or not) in the function's module globals.

    Each parameter is resolved on its own, so an unresolvable annotation on `context` or on
    the return value (which the schema never needs) cannot break the tool.
    """
    if annotation is inspect.Parameter.empty:
        return Any
    holder = types.SimpleNamespace(__annotations__={name: annotation})
    globalns = getattr(inspect.unwrap(func), "__globals__", {})
    try:
        return typing.get_type_hints(holder, globalns=globalns, include_extras=True)[name]
    except NameError as exc:
        message = f"parameter {name!r}: annotation {annotation!r} cannot be resolved ({exc})"
        raise UnresolvedAnnotation(message, parameter=name) from exc
    except Exception as exc:
        message = f"parameter {name!r}: invalid annotation {annotation!r} ({exc})"
        raise ToolDefinitionError(message, parameter=name) from exc


# Type hints -> JSON schema.

_PRIMITIVES: dict[object, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    None: "null",
}
_ARRAYS: frozenset[object] = frozenset(
    {list, set, frozenset, collections.abc.Sequence, collections.abc.MutableSequence}
)
_SETS: frozenset[object] = frozenset({set, frozenset, collections.abc.Set})
_MAPPINGS: frozenset[object] = frozenset(
    {dict, collections.abc.Mapping, collections.abc.MutableMapping}
)
_UNIONS: frozenset[object] = frozenset({typing.Union, types.UnionType})
_WRAPPERS: frozenset[object] = frozenset({typing.Required, typing.NotRequired, typing.ClassVar})


_MODULE_PATH = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")


def shown_type(annotation: object) -> str:
    """`annotation` as the author wrote it: `Weird`, `list[Weird]`, never the module Keel
    imported the tool file as (`keel_project_tools.<hash>...`)."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__qualname__
    return _MODULE_PATH.sub("", repr(annotation))


def type_schema(annotation: object, *, parameter: str) -> Schema:
    """The JSON schema for `annotation` (already resolved, no strings left)."""
    return _Converter(parameter).convert(annotation, ())


def make_nullable(schema: Schema) -> Schema:
    """`schema` also accepting null: a type list with "null", or an anyOf when untyped."""
    if not schema:
        return schema
    kind = schema.get("type")
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    kinds = [kind] if isinstance(kind, str) else list(kind)
    out = {**schema, "type": kinds if "null" in kinds else [*kinds, "null"]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def json_default(value: object) -> tuple[bool, object]:
    """(True, JSON form) when a default value can be shown in a schema, else (False, None)."""
    if isinstance(value, enum.Enum):
        return json_default(value.value)
    if value is None or isinstance(value, str | bool | int | float):
        return True, value
    if isinstance(value, list | tuple):
        items = [json_default(item) for item in value]
        return all(ok for ok, _ in items), [item for _, item in items]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        pairs = {key: json_default(item) for key, item in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def _enum_schema(values: list[object]) -> Schema:
    kinds = {_PRIMITIVES.get(type(value)) for value in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    return {"type": kind, "enum": values} if kind is not None else {"enum": values}


class _Converter:
    """Walks one annotation; `parameter` names the tool argument in error messages."""

    def __init__(self, parameter: str) -> None:
        self.parameter = parameter

    def fail(self, annotation: object, why: str = "unsupported annotation") -> ToolDefinitionError:
        return ToolDefinitionError(
            f"parameter {self.parameter!r}: {why} `{shown_type(annotation)}`",
            parameter=self.parameter,
        )

    def convert(self, tp: object, seen: tuple[object, ...]) -> Schema:
        if tp is Any or tp is object:
            return {}
        if _is_hashable(tp) and tp in _PRIMITIVES:
            return {"type": _PRIMITIVES[tp]}
        origin = typing.get_origin(tp)
        handler = self._by_origin(origin) if origin is not None else self._by_class(tp)
        if handler is None:
            raise self.fail(tp)
        return handler(tp, seen)

    def _by_origin(self, origin: object) -> Callable[[object, tuple[object, ...]], Schema] | None:
        if origin is typing.Annotated:
            return self._annotated
        if origin is typing.Literal:
            return lambda tp, _: _enum_schema([_plain(v) for v in typing.get_args(tp)])
        if origin in _UNIONS:
            return self._union
        if origin in _WRAPPERS:
            return lambda tp, seen: self.convert(typing.get_args(tp)[0], seen)
        if origin is tuple:
            return self._tuple
        if origin in _ARRAYS or origin in _SETS:
            return self._array
        if origin in _MAPPINGS:
            return self._mapping
        return None

    def _by_class(self, tp: object) -> Callable[[object, tuple[object, ...]], Schema] | None:
        if tp is tuple:
            return lambda _tp, _seen: {"type": "array"}
        if _is_hashable(tp) and (tp in _ARRAYS or tp in _SETS):
            return self._array
        if _is_hashable(tp) and tp in _MAPPINGS:
            return lambda _tp, _seen: {"type": "object"}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return lambda tp, _: _enum_schema([member.value for member in tp])  # type: ignore[attr-defined]
        if _is_typeddict(tp):
            return self._typeddict
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._dataclass
        return None

    def _annotated(self, tp: object, seen: tuple[object, ...]) -> Schema:
        base, *meta = typing.get_args(tp)
        schema = self.convert(base, seen)
        text = next((m for m in meta if isinstance(m, str) and m.strip()), None)
        return {**schema, "description": text.strip()} if text else schema

    def _union(self, tp: object, seen: tuple[object, ...]) -> Schema:
        members = typing.get_args(tp)
        rest = [m for m in members if m is not type(None) and m is not None]
        nullable = len(rest) < len(members)
        schemas = [self.convert(m, seen) for m in rest]
        if any(not s for s in schemas):
            return {}
        if len(schemas) == 1:
            return make_nullable(schemas[0]) if nullable else schemas[0]
        if nullable:
            schemas.append({"type": "null"})
        return {"anyOf": schemas}

    def _tuple(self, tp: object, seen: tuple[object, ...]) -> Schema:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _array_of(self.convert(args[0], seen))
        if args == ((),):
            args = ()
        items = [self.convert(arg, seen) for arg in args]
        size = len(items)
        return {"type": "array", "prefixItems": items, "minItems": size, "maxItems": size}

    def _array(self, tp: object, seen: tuple[object, ...]) -> Schema:
        args = typing.get_args(tp)
        schema = _array_of(self.convert(args[0], seen)) if args else {"type": "array"}
        origin = typing.get_origin(tp) or tp
        return {**schema, "uniqueItems": True} if origin in _SETS else schema

    def _mapping(self, tp: object, seen: tuple[object, ...]) -> Schema:
        args = typing.get_args(tp)
        if not args:
            return {"type": "object"}
        if args[0] is not str:
            raise self.fail(tp, "mapping keys must be str in")
        values = self.convert(args[1], seen)
        return {"type": "object", "additionalProperties": values} if values else {"type": "object"}

    def _typeddict(self, tp: object, seen: tuple[object, ...]) -> Schema:
        hints = self._hints(tp, seen)
        required_keys = getattr(tp, "__required_keys__", frozenset(hints))
        properties = {name: self.convert(hint, (*seen, tp)) for name, hint in hints.items()}
        required = [name for name, hint in hints.items() if _required(name, hint, required_keys)]
        return _object(properties, required)

    def _dataclass(self, tp: object, seen: tuple[object, ...]) -> Schema:
        hints = self._hints(tp, seen)
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for field in dataclasses.fields(tp):  # type: ignore[arg-type]
            if not field.init:
                continue
            schema = self.convert(hints.get(field.name, Any), (*seen, tp))
            if field.default is dataclasses.MISSING:
                if field.default_factory is dataclasses.MISSING:
                    required.append(field.name)
            else:
                ok, value = json_default(field.default)
                schema = {**schema, "default": value} if ok else schema
            properties[field.name] = schema
        return _object(properties, required)

    def _hints(self, tp: object, seen: tuple[object, ...]) -> dict[str, Any]:
        if tp in seen:
            raise self.fail(tp, "recursive type")
        try:
            return typing.get_type_hints(tp, include_extras=True)
        except Exception as exc:
            raise self.fail(tp, f"cannot resolve field annotations ({exc}) of") from exc


def _required(name: str, hint: object, required_keys: frozenset[str]) -> bool:
    # With string annotations (PEP 563) Python 3.11 cannot see Required/NotRequired when
    # it computes __required_keys__; the resolved hint still carries them.
    origin = typing.get_origin(hint)
    if origin is typing.NotRequired:
        return False
    return origin is typing.Required or name in required_keys


def _object(properties: dict[str, Schema], required: list[str]) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _array_of(items: Schema) -> Schema:
    return {"type": "array", "items": items} if items else {"type": "array"}


def _plain(value: object) -> object:
    return value.value if isinstance(value, enum.Enum) else value


def _is_hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _is_typeddict(tp: object) -> bool:
    # typing.is_typeddict misses typing_extensions TypedDicts on some versions; duck-type too.
    return typing.is_typeddict(tp) or (
        isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")
    )


# Per-argument descriptions from the `Args:` section of a Google-style docstring.

_SECTION = re.compile(r"^(?P<indent>\s*)(?:Args|Arguments|Parameters|Params)\s*:\s*$")
_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?P<text>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_arg_descriptions(doc: str | None) -> dict[str, str]:
    """Map argument name -> description from the docstring's `Args:` section.

    Continuation lines (indented deeper than the entry) are joined with single spaces.
    The section ends at the first non-blank line indented no deeper than its header
    (e.g. `Returns:` or a closing paragraph). Returns {} when there is no such section.
    """
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    start = next((i for i, line in enumerate(lines) if _SECTION.match(line)), None)
    if start is None:
        return {}
    header_indent = _indent(lines[start])
    entry_indent: int | None = None
    parts: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.match(line.strip()) if indent <= entry_indent else None
        if match is not None:
            current = match.group("name")
            parts[current] = [match.group("text").strip()]
        elif current is not None:
            parts[current].append(line.strip())
    return {name: " ".join(p for p in texts if p) for name, texts in parts.items()}
