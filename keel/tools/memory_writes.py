"""Static scan of a tool module's source for memory writes (`context.memory.set("key", ...)`).

The project builder reports keys that no memory schema declares (`memory.undeclared_write`)
without running any tool. Keys are found when written as a string literal or as a
module-level string constant (`KEY = "project.x"`); other keys are recorded with `key=None`.
A function's writes include those of same-module functions it calls by name, so a tool that
writes through a local helper is still checked.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from keel.tools.definition import MemoryWrite

_METHODS: dict[str, Literal["set", "clear"]] = {"set": "set", "clear": "clear"}
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, kw_only=True, slots=True)
class ModuleWrites:
    """Memory writes of one module."""

    writes: tuple[MemoryWrite, ...]
    """Every write in the module, in line order."""
    by_def_line: Mapping[int, tuple[MemoryWrite, ...]]
    """Function `def` line -> its writes, including same-module helpers it calls."""


def scan_memory_writes(tree: ast.Module) -> ModuleWrites:
    """Find the memory writes in a parsed module."""
    constants = _string_constants(tree)
    functions = [node for node in ast.walk(tree) if isinstance(node, _FunctionNode)]
    top_level = {node.name: node for node in tree.body if isinstance(node, _FunctionNode)}
    direct = {id(node): _writes_in(node, constants) for node in functions}
    by_line = {
        node.lineno: _sorted(_reachable_writes(node, top_level, direct)) for node in functions
    }
    return ModuleWrites(
        writes=_sorted(_writes_in(tree, constants)), by_def_line=MappingProxyType(by_line)
    )


def _string_constants(tree: ast.Module) -> dict[str, str]:
    constants: dict[str, str] = {}
    for statement in tree.body:
        target: ast.expr | None = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign):
            target = statement.target
        value = getattr(statement, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            if isinstance(value.value, str):
                constants[target.id] = value.value
    return constants


def _writes_in(node: ast.AST, constants: Mapping[str, str]) -> list[MemoryWrite]:
    found: list[MemoryWrite] = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        method = _METHODS.get(call.func.attr)
        owner = call.func.value
        if method is None or not (isinstance(owner, ast.Attribute) and owner.attr == "memory"):
            continue
        key_node = call.args[0] if call.args else _keyword(call, "key")
        if key_node is None:
            continue
        found.append(MemoryWrite(key=_key(key_node, constants), line=call.lineno, method=method))
    return found


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _key(node: ast.expr, constants: Mapping[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _reachable_writes(
    start: _FunctionNode,
    top_level: Mapping[str, _FunctionNode],
    direct: Mapping[int, list[MemoryWrite]],
) -> list[MemoryWrite]:
    seen = {id(start)}
    stack = [start]
    writes: list[MemoryWrite] = []
    while stack:
        node = stack.pop()
        writes.extend(direct.get(id(node), ()))
        for called in _called_names(node):
            target = top_level.get(called)
            if target is not None and id(target) not in seen:
                seen.add(id(target))
                stack.append(target)
    return writes


def _called_names(node: ast.AST) -> set[str]:
    return {
        call.func.id
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    }


def _sorted(writes: list[MemoryWrite]) -> tuple[MemoryWrite, ...]:
    unique = {(w.line, w.key or "", w.method): w for w in writes}
    return tuple(unique[k] for k in sorted(unique))
