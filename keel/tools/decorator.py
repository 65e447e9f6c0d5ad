"""The `@tool(description=...)` decorator.

It checks the function (must be `async def`, description mandatory, named parameters only,
supported annotations) and its plan contract keywords (`keel.tools.contract`; a bad value,
or a contract naming an argument the function does not take, is an error), builds a
`ToolDefinition`, attaches it to the function as `__keel_tool__` and returns the function
unchanged, so it stays directly callable.
Mistakes raise `ToolDefinitionError` while the module is imported; the loader turns that
into a `tool.definition.invalid` diagnostic.

An annotation naming a class defined later in the module cannot be resolved while the
decorator runs; the definition is then finished on first use (`tool_definition`), which
the loader does right after the import.

While the loader imports a tool file it turns raising off (`deferred_errors`): a bad
`@tool` then marks its function instead, `tool_definition` raises for it, and the file's
other tools still load.
"""

from __future__ import annotations

import inspect
import linecache
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence, Set
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar, cast, overload

from keel.tools.contract import (
    CONTRACT_KEYS,
    Binding,
    Effect,
    ToolContract,
    contract_problems,
    make_contract,
)
from keel.tools.definition import ToolDefinition, ToolDefinitionError
from keel.tools.frozen import freeze_json
from keel.tools.schema import UnresolvedAnnotation, function_parameters

__all__ = ["TOOL_ATTRIBUTE", "ToolDefinition", "ToolDefinitionError", "tool", "tool_definition"]

TOOL_ATTRIBUTE = "__keel_tool__"
"""Attribute holding the definition on a decorated function."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_F = TypeVar("_F", bound=Callable[..., Awaitable[Any]])


@dataclass(frozen=True, kw_only=True, slots=True)
class _Pending:
    """A tool whose annotations could not be resolved yet at decoration time."""

    func: Callable[..., Awaitable[Any]]
    description: str
    name: str | None
    contract: Mapping[str, object] = field(default_factory=dict)
    blocking: bool | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class _Broken:
    """A `@tool` that failed while its file was imported with `deferred_errors`."""

    error: ToolDefinitionError


_DEFER_ERRORS: ContextVar[bool] = ContextVar("keel_tool_defer_errors", default=False)


@contextmanager
def deferred_errors() -> Iterator[None]:
    """Within: a bad `@tool` on a function marks it rather than raising (the loader's mode)."""
    token = _DEFER_ERRORS.set(True)
    try:
        yield
    finally:
        _DEFER_ERRORS.reset(token)


def _mark_broken(func: Any, error: ToolDefinitionError) -> Any:
    """`func` marked with `error` (filled with its name and line), or raise `error` when
    errors are not deferred or `func` is no function (a loader would not find it)."""
    if not _DEFER_ERRORS.get() or not inspect.isfunction(func):
        raise error
    error.function = error.function or func.__name__
    error.line = error.line or def_line(func)
    setattr(func, TOOL_ATTRIBUTE, _Broken(error=error))
    return func


@overload
def tool(
    *,
    description: str,
    name: str | None = None,
    effect: Effect | None = None,
    bindings: Mapping[str, Binding] | None = None,
    idempotency_key: Sequence[str] | None = None,
    output_schema: Mapping[str, object] | None = None,
    runtime_resolved: Iterable[str] | None = None,
    outbound_args: Iterable[str] | None = None,
    verbs: Sequence[str] | None = None,
    blocking: bool | None = None,
) -> Callable[[_F], _F]: ...


@overload
def tool(func: Callable[..., Any], /) -> NoReturn: ...


def tool(
    *args: object,
    description: object = None,
    name: object = None,
    blocking: object = None,
    **contract: object,
) -> Callable[[_F], _F]:
    """Mark an `async def` as a tool offered to the LLM.

    `description` (mandatory, non-empty) tells the model what the tool does; `name`
    overrides the function name; `blocking=True` runs it in a worker thread (it does
    blocking IO), `blocking=False` keeps it on the event loop whatever the source scan
    finds (`keel.tools.blocking`). The other keywords declare the tool's plan contract
    (`keel.tools.contract`). Bare `@tool` raises `ToolDefinitionError`.
    """
    if args:
        target = args[0]
        error = ToolDefinitionError(
            '@tool needs its description: write @tool(description="...")',
            function=getattr(target, "__name__", None),
            line=def_line(target),
        )
        return cast(Callable[[_F], _F], _mark_broken(target, error))
    try:
        text = _check_description(description)
        tool_name = _check_name(name)
        declared = _check_contract(contract)
        if blocking is not None and not isinstance(blocking, bool):
            raise ToolDefinitionError("@tool blocking must be true, false or left out")
    except ToolDefinitionError as exc:
        if not _DEFER_ERRORS.get():
            raise
        caller = inspect.currentframe()
        caller = caller.f_back if caller is not None else None
        # The line of the `@tool(...)` call itself, as a traceback would have shown it.
        exc.line = exc.line or (caller.f_lineno if caller is not None else None)
        failed = exc

        def mark(func: _F) -> _F:
            return cast(_F, _mark_broken(func, failed))

        return mark

    def decorate(func: _F) -> _F:
        try:
            attached: ToolDefinition | _Pending = define_tool(
                func, text, tool_name, declared, blocking=blocking
            )
        except UnresolvedAnnotation:
            attached = _Pending(
                func=func, description=text, name=tool_name, contract=declared, blocking=blocking
            )
        except ToolDefinitionError as exc:
            return cast(_F, _mark_broken(func, exc))
        setattr(func, TOOL_ATTRIBUTE, attached)
        return func

    return decorate


def tool_definition(func: object) -> ToolDefinition | None:
    """The definition attached by `@tool`, finishing a deferred one (may raise
    `ToolDefinitionError`); None when `func` is not a tool."""
    attached = getattr(func, TOOL_ATTRIBUTE, None)
    if isinstance(attached, _Broken):
        raise attached.error
    if isinstance(attached, _Pending):
        attached = define_tool(
            attached.func,
            attached.description,
            attached.name,
            attached.contract,
            blocking=attached.blocking,
        )
        setattr(func, TOOL_ATTRIBUTE, attached)
    return attached if isinstance(attached, ToolDefinition) else None


def define_tool(
    func: Callable[..., Awaitable[Any]],
    description: str,
    name: str | None = None,
    contract: Mapping[str, object] | None = None,
    *,
    blocking: bool | None = None,
) -> ToolDefinition:
    """Build the definition of `func` (raises `ToolDefinitionError`); `contract` is a
    declaration already checked by `contract_declaration`."""
    function = getattr(func, "__name__", repr(func))
    line = def_line(func)
    try:
        if not inspect.iscoroutinefunction(func):
            kind = "an async generator" if inspect.isasyncgenfunction(func) else "not async"
            raise ToolDefinitionError(f"@tool function {function!r} is {kind}; use `async def`")
        tool_name = name if name is not None else _check_name(function)
        assert tool_name is not None
        params = function_parameters(func)
        tool_contract = build_contract(contract or {}, params.param_names)
    except ToolDefinitionError as exc:
        exc.function = exc.function or function
        exc.line = exc.line or line
        raise
    code = getattr(func, "__code__", None)
    return ToolDefinition(
        name=tool_name,
        description=description,
        parameters=freeze_json(params.parameters),  # type: ignore[arg-type]
        func=func,
        context_param=params.context_param,
        param_names=params.param_names,
        module_file=code.co_filename if code is not None else "",
        line=line or 0,
        contract=tool_contract,
        blocking=blocking,
    )


def def_line(func: object) -> int | None:
    """1-based line of the `def` of `func` (not of its first decorator), when known."""
    code = getattr(func, "__code__", None)
    if code is None:
        return None
    first: int = code.co_firstlineno
    lines = linecache.getlines(code.co_filename, getattr(func, "__globals__", None))
    pattern = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(code.co_name)}\b")
    # Decorators (possibly spanning lines) sit between co_firstlineno and the def.
    for index in range(first - 1, min(len(lines), first + 200)):
        if pattern.match(lines[index]):
            return index + 1
    return first


def _check_description(description: object) -> str:
    if description is None:
        raise ToolDefinitionError('@tool needs description="..." (it tells the model what it does)')
    if not isinstance(description, str) or not description.strip():
        raise ToolDefinitionError("@tool description must be a non-empty string")
    return description.strip()


def _check_contract(keywords: Mapping[str, object]) -> dict[str, object]:
    unknown = sorted(set(keywords) - set(CONTRACT_KEYS))
    if unknown:
        raise ToolDefinitionError(
            f"@tool got unexpected keyword(s) {', '.join(unknown)}; it takes description, "
            f"name and the contract keywords {', '.join(CONTRACT_KEYS)}"
        )
    return contract_declaration(keywords)


def _check_name(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not _NAME.match(name):
        raise ToolDefinitionError(
            f"tool name {name!r} must be 1-64 letters, digits, '_' or '-', not starting "
            "with a digit or '-'"
        )
    return name


_ARGUMENT_LISTS = ("idempotency_key", "runtime_resolved", "outbound_args")


def contract_declaration(values: Mapping[str, object]) -> dict[str, object]:
    """The contract keywords that were given (sets become sorted lists); raises
    `ToolDefinitionError` naming every problem."""
    raw: dict[str, object] = {}
    for key in CONTRACT_KEYS:
        value = values.get(key)
        if isinstance(value, Set):
            value = sorted(value, key=str)
        elif isinstance(value, tuple):
            value = list(value)
        if value is not None:
            raw[key] = value
    problems = contract_problems(raw)
    if problems:
        raise ToolDefinitionError("@tool contract: " + "; ".join(problems))
    return raw


def build_contract(raw: Mapping[str, object], param_names: Sequence[str]) -> ToolContract:
    """The contract of a tool taking `param_names`; `ToolContract()` when nothing was
    declared. Raises `ToolDefinitionError` when the contract names an unknown argument."""
    if not raw:
        return ToolContract()
    unknown: list[str] = []
    bindings = raw.get("bindings")
    named = list(bindings) if isinstance(bindings, Mapping) else []
    for key in _ARGUMENT_LISTS:
        value = raw.get(key)
        named += [str(v) for v in value] if isinstance(value, list) else []
    unknown = sorted({str(n) for n in named} - set(param_names))
    if unknown:
        takes = ", ".join(param_names) or "no arguments"
        raise ToolDefinitionError(
            f"@tool contract names argument(s) {', '.join(unknown)} the function does not "
            f"take (it takes {takes})"
        )
    return make_contract(raw)
