"""Static scan of a tool module for blocking IO inside `async def` (`tool.blocking_io_in_async`).

Mantle tools often call sqlite3, `time.sleep` or `requests` synchronously inside an
`async def`: such a call holds the event loop, so no deadline can stop it and every other
conversation of the process waits. The loader finds these calls where the source shows
them, warns, and marks the tool to run in a worker thread (`keel.tools.threads`).

A call is seen when it is written in the function's body, or in a same-module function it
calls by name (a local helper), as one of `BLOCKING_CALLS` (dotted as written, so
`sqlite3.connect(...)`, `time.sleep(...)`, `requests.get(...)`) or a bare `open(...)`.
Code imported from other modules, or reached through an alias (`from time import sleep`),
is not seen; `@tool(blocking=True)` says so by hand.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

BLOCKING_MODULES: Final = frozenset(
    {"sqlite3", "requests", "psycopg2", "pymysql", "MySQLdb", "urllib.request", "socket"}
)
"""Every call of an attribute of these modules blocks (`requests.get`, `sqlite3.connect`)."""

BLOCKING_CALLS: Final = frozenset(
    {
        "time.sleep",
        "open",
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
        "input",
    }
)
"""Single blocking functions, dotted as written in the source."""

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, kw_only=True, slots=True)
class BlockingCall:
    """A blocking call found in (or reached from) an `async def`."""

    call: str
    """As written, dotted: `sqlite3.connect`, `time.sleep`, `open`."""
    line: int
    """1-based line of the call."""


def scan_blocking_calls(tree: ast.Module) -> Mapping[int, tuple[BlockingCall, ...]]:
    """`def` line of each top-level `async def` -> the blocking calls it makes, directly or
    through same-module functions it calls by name (line order; only non-empty entries)."""
    top_level = {node.name: node for node in tree.body if isinstance(node, _FunctionNode)}
    found: dict[int, tuple[BlockingCall, ...]] = {}
    for node in top_level.values():
        if not isinstance(node, ast.AsyncFunctionDef):
            continue
        calls = _reachable(node, top_level)
        if calls:
            found[node.lineno] = calls
    return MappingProxyType(found)


def _reachable(
    start: _FunctionNode, top_level: Mapping[str, _FunctionNode]
) -> tuple[BlockingCall, ...]:
    seen = {id(start)}
    stack: list[_FunctionNode] = [start]
    calls: dict[tuple[int, str], BlockingCall] = {}
    while stack:
        node = stack.pop()
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            name = _dotted(call.func)
            if name is not None and _blocks(name):
                calls[(call.lineno, name)] = BlockingCall(call=name, line=call.lineno)
            target = top_level.get(name or "")
            # A sync helper runs inside the caller's await; an async one is scanned itself.
            if isinstance(target, ast.FunctionDef) and id(target) not in seen:
                seen.add(id(target))
                stack.append(target)
    return tuple(calls[key] for key in sorted(calls))


def _blocks(name: str) -> bool:
    if name in BLOCKING_CALLS:
        return True
    module, _, _ = name.rpartition(".")
    return module in BLOCKING_MODULES


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
