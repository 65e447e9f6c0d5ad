"""Collect the tools and post-write hooks an imported tool module defines.

Only functions defined in the module itself count (not ones it imports). A function named
`run_after_setting_<entry>` is a hook, with or without `@tool`, and is never a tool.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from keel.source.diagnostics import Diagnostic, diag
from keel.tools.decorator import def_line, tool, tool_definition
from keel.tools.definition import HOOK_PREFIX, HookDefinition, ToolDefinition, ToolDefinitionError
from keel.tools.schema import CONTEXT_PARAM


@dataclass(frozen=True, kw_only=True, slots=True)
class Collected:
    """Definitions found in one module (module_file already project-relative)."""

    tools: tuple[ToolDefinition, ...]
    hooks: tuple[HookDefinition, ...]
    diagnostics: tuple[Diagnostic, ...]


def collect_definitions(module: ModuleType, *, module_name: str, file: str) -> Collected:
    """Tools and hooks defined in `module`, in line order, plus what is wrong with them."""
    tools: dict[str, ToolDefinition] = {}
    hooks: list[HookDefinition] = []
    diagnostics: list[Diagnostic] = _foreign_decorator(module, file)
    for func in _own_functions(module, module_name):
        if func.__name__.startswith(HOOK_PREFIX):
            hook, problem = _hook(func, file)
            hooks.extend([hook] if hook else [])
            diagnostics.extend([problem] if problem else [])
            continue
        try:
            definition = tool_definition(func)
        except ToolDefinitionError as exc:
            line = exc.line or def_line(func)
            diagnostics.append(
                diag("tool.definition.invalid", file, line, exc.message, key=exc.function)
            )
            continue
        if definition is None:
            continue
        if definition.name in tools:
            first = tools[definition.name]
            message = f"tool {definition.name!r} is defined twice (first at line {first.line})"
            diagnostics.append(
                diag("tool.duplicate_name", file, definition.line, message, key=definition.name)
            )
            continue
        tools[definition.name] = replace(definition, module_file=file)
    return Collected(
        tools=tuple(tools.values()), hooks=tuple(hooks), diagnostics=tuple(diagnostics)
    )


def _own_functions(module: ModuleType, module_name: str) -> list[Any]:
    unique = {
        id(value): value
        for value in vars(module).values()
        if inspect.isfunction(value) and getattr(value, "__module__", None) == module_name
    }
    return sorted(unique.values(), key=lambda f: (def_line(f) or 0, f.__name__))


def _hook(func: Any, file: str) -> tuple[HookDefinition | None, Diagnostic | None]:
    name: str = func.__name__
    entry = name[len(HOOK_PREFIX) :]
    line = def_line(func)
    if not entry:
        message = f"hook {name!r} names no memory entry (expected {HOOK_PREFIX}<entry>)"
        return None, diag("tool.hook.invalid", file, line, message, key=name)
    if not hook_accepts_no_arguments(func):
        message = (
            f"hook {name!r} must take no required arguments except `context` "
            "(it reads what was just written from memory)"
        )
        return None, diag("tool.hook.invalid_signature", file, line, message, key=name)
    parameters = inspect.signature(func).parameters
    hook = HookDefinition(
        entry=entry,
        name=name,
        func=func,
        is_async=inspect.iscoroutinefunction(func),
        context_param=CONTEXT_PARAM if CONTEXT_PARAM in parameters else None,
        module_file=file,
        line=line or 0,
    )
    return hook, None


def hook_accepts_no_arguments(func: Any) -> bool:
    """True when `func` can be called with nothing but an optional `context` keyword."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return False
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name == CONTEXT_PARAM and param.kind is not param.POSITIONAL_ONLY:
            continue
        if param.default is param.empty:
            return False
    return True


def _foreign_decorator(module: ModuleType, file: str) -> list[Diagnostic]:
    """Warn when the module's `tool` is a real Rasa decorator (Keel cannot see those tools)."""
    decorator = vars(module).get("tool")
    owner = getattr(decorator, "__module__", None) or ""
    if decorator is None or decorator is tool or not owner.startswith("rasa."):
        return []
    message = (
        f"`tool` comes from the installed {owner}, not from Keel; tools decorated with it "
        "are invisible to Keel (uninstall rasa or import keel.tools.tool)"
    )
    return [diag("tool.compat.foreign_decorator", file, None, message, severity="warning")]
