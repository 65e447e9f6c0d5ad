"""Import one tool module by path and collect its tools and post-write hooks.

Nothing escapes as an exception: an unreadable file, a syntax error, a failing import, any
other exception while the module runs, and a bad `@tool` all become diagnostics with the
file (relative to the project root) and, when known, the line.

Before importing, the Mantle compatibility shim is installed and the project root is put on
`sys.path` (and left there, because tools import project helpers such as `lib.*` or
`tools.<shared>` at call time too). Modules are registered in `sys.modules` under the
caller's `module_name`, which must be unique per file.

Only functions defined in the module itself count (not ones it imports). A function named
`run_after_setting_<entry>` is a hook, with or without `@tool`, and is never a tool.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import sys
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from keel.source.diagnostics import Diagnostic, diag
from keel.tools.blocking import scan_blocking_calls
from keel.tools.compat import install_compat_shim
from keel.tools.decorator import def_line, deferred_errors, tool, tool_definition
from keel.tools.definition import (
    HOOK_PREFIX,
    HookDefinition,
    MemoryWrite,
    ToolDefinition,
    ToolDefinitionError,
)
from keel.tools.memory_writes import scan_memory_writes
from keel.tools.schema import CONTEXT_PARAM


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolModule:
    """Everything learned from one tool file."""

    file: str
    """Path relative to the project root, forward slashes."""
    module_name: str
    tools: tuple[ToolDefinition, ...]
    hooks: tuple[HookDefinition, ...]
    memory_writes: tuple[MemoryWrite, ...]
    """Every memory write in the file, including helpers no tool reaches."""
    diagnostics: tuple[Diagnostic, ...]


def load_tool_module(
    path: Path, *, project_root: Path, module_name: str
) -> tuple[tuple[ToolDefinition, ...], tuple[HookDefinition, ...], list[Diagnostic]]:
    """Import `path` as `module_name`; return its tools, hooks and diagnostics."""
    loaded = load_tool_file(path, project_root=project_root, module_name=module_name)
    return loaded.tools, loaded.hooks, list(loaded.diagnostics)


def load_tool_file(path: Path, *, project_root: Path, module_name: str) -> ToolModule:
    """Like `load_tool_module`, returning the whole `ToolModule` (with all memory writes)."""
    file = relative_file(path, project_root)
    tree, problem = _parse(path, file)
    if tree is None:
        return _empty(file, module_name, [problem] if problem else [])
    writes = scan_memory_writes(tree)
    module, failure = _execute(path, file, project_root, module_name)
    if module is None:
        return _empty(file, module_name, [failure] if failure else [], writes.writes)
    found = collect_definitions(module, module_name=module_name, file=file)
    blocking = scan_blocking_calls(tree)
    tools = tuple(
        replace(
            t,
            memory_writes=writes.by_def_line.get(t.line, ()),
            blocking_calls=blocking.get(t.line, ()),
        )
        for t in found.tools
    )
    hooks = tuple(
        replace(
            h,
            memory_writes=writes.by_def_line.get(h.line, ()),
            blocking_calls=blocking.get(h.line, ()),
        )
        for h in found.hooks
    )
    return ToolModule(
        file=file,
        module_name=module_name,
        tools=tools,
        hooks=hooks,
        memory_writes=writes.writes,
        diagnostics=(*found.diagnostics, *_blocking_warnings(file, tools, hooks)),
    )


def _blocking_warnings(
    file: str, tools: tuple[ToolDefinition, ...], hooks: tuple[HookDefinition, ...]
) -> list[Diagnostic]:
    """`tool.blocking_io_in_async`: one warning per `async def` seen doing blocking IO
    that does not say `@tool(blocking=...)`, at the line of its first such call."""
    found: list[Diagnostic] = []
    named = [(t.name, t.blocking_calls) for t in tools if t.blocking is None]
    named += [(h.name, h.blocking_calls) for h in hooks if h.is_async]
    for name, calls in named:
        if not calls:
            continue
        listed = ", ".join(sorted({f"{c.call}()" for c in calls}))
        message = (
            f"async def {name} does blocking IO ({listed}) that would hold the event loop; "
            "Keel runs it in a worker thread so tool_timeout holds and other conversations "
            "go on. Use an async library or `await asyncio.to_thread(...)`, or say "
            "@tool(blocking=True) to keep the thread and silence this"
        )
        found.append(
            diag(
                "tool.blocking_io_in_async",
                file,
                calls[0].line,
                message,
                key=name,
                severity="warning",
            )
        )
    return found


def relative_file(path: Path, project_root: Path) -> str:
    """`path` relative to `project_root` with forward slashes (as given when outside it)."""
    try:
        return path.resolve().relative_to(project_root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _empty(
    file: str,
    module_name: str,
    diagnostics: list[Diagnostic],
    writes: tuple[MemoryWrite, ...] = (),
) -> ToolModule:
    return ToolModule(
        file=file,
        module_name=module_name,
        tools=(),
        hooks=(),
        memory_writes=writes,
        diagnostics=tuple(diagnostics),
    )


def _parse(path: Path, file: str) -> tuple[ast.Module | None, Diagnostic | None]:
    try:
        source = importlib.util.decode_source(path.read_bytes())
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        message = f"cannot read tool module: {exc}"
        return None, diag("tool.module.unreadable", file, None, message)
    try:
        return ast.parse(source, filename=str(path)), None
    except SyntaxError as exc:
        message = f"syntax error: {exc.msg}"
        return None, diag("tool.module.syntax_error", file, exc.lineno, message)
    except ValueError as exc:  # e.g. null bytes in the source
        return None, diag("tool.module.syntax_error", file, None, f"invalid source: {exc}")


def _execute(
    path: Path, file: str, project_root: Path, module_name: str
) -> tuple[ModuleType | None, Diagnostic | None]:
    install_compat_shim()
    _ensure_on_path(project_root)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None, diag("tool.module.unreadable", file, None, "cannot import this file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        # A bad @tool marks its function (reported by collect_definitions), not the file.
        with deferred_errors():
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(module_name, None)
        return None, _failure(exc, path, file)
    return module, None


def _failure(exc: BaseException, path: Path, file: str) -> Diagnostic:
    line = _line_in(exc, path)
    if isinstance(exc, ToolDefinitionError):
        where = exc.line if exc.line is not None else line
        return diag("tool.definition.invalid", file, where, exc.message, key=exc.function)
    if isinstance(exc, ImportError):
        message = f"import failed: {exc}"
        if (exc.name or "").startswith("rasa"):
            message += " (Keel serves only rasa.mantle.tools.* and rasa.calm_v2.tools.*)"
        return diag("tool.module.import_error", file, line, message, key=exc.name)
    message = f"error while importing: {type(exc).__name__}: {exc}"
    return diag("tool.module.load_error", file, line, message)


def _line_in(exc: BaseException, path: Path) -> int | None:
    """The deepest traceback line that lies in `path` (the statement that failed there)."""
    target = os.path.normcase(os.path.abspath(path))
    line: int | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.normcase(os.path.abspath(frame.filename)) == target:
            line = frame.lineno
    return line


def _ensure_on_path(project_root: Path) -> None:
    """Put the project root first on `sys.path` and forget same-named modules of other roots.

    Tool modules import project helpers by top-level name (`lib`, `tools.<x>`). When several
    projects are loaded into one process, a `lib` cached from another project would
    otherwise be reused; it is dropped from `sys.modules` so this project's is imported.
    """
    root = project_root.resolve()
    if not sys.path or sys.path[0] != str(root):
        sys.path[:] = [str(root), *(entry for entry in sys.path if entry != str(root))]
    for name in _top_level_names(root):
        family = [k for k in sys.modules if k == name or k.startswith(name + ".")]
        if any(_foreign(sys.modules[key], root) for key in family):
            for key in family:
                del sys.modules[key]


def _top_level_names(root: Path) -> list[str]:
    """Importable top-level names the project provides (never stdlib or Keel names)."""
    try:
        children = list(root.iterdir())
    except OSError:
        return []
    names = [child.stem if child.suffix == ".py" else child.name for child in children]
    protected = sys.stdlib_module_names | set(sys.builtin_module_names) | {"keel", "rasa"}
    return [name for name in names if name.isidentifier() and name not in protected]


def _foreign(module: ModuleType, root: Path) -> bool:
    """True when `module` was loaded from a file outside `root`."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return False
    return not Path(file).resolve().is_relative_to(root)


# Collecting the tools and hooks an imported module defines.


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
