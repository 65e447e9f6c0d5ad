"""A tool function's signature -> the JSON schema object of its LLM-visible arguments.

The parameter named `context` is injected by the engine and left out. Parameters with a
default are optional (the default is recorded when it is JSON); a `None` default makes the
type nullable. `*args` / `**kwargs` and positional-only parameters cannot be passed by name
and are definition errors. Descriptions come from the docstring's `Args:` section.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keel.tools.definition import ToolDefinitionError
from keel.tools.docstrings import parse_arg_descriptions
from keel.tools.schema import Schema, json_default, make_nullable, type_schema

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
