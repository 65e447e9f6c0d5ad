"""Static scan for memory writes in tool module source."""

from __future__ import annotations

import ast
import textwrap

from keel.tools.definition import MemoryWrite
from keel.tools.memory_writes import scan_memory_writes

SOURCE = textwrap.dedent(
    """
    CUSTOMER = "project.customer_id"
    NOT_A_KEY = 3


    def _store(context, row):
        context.memory.set("complaint_id", row["id"])
        _deeper(context)


    def _deeper(context):
        context.memory.clear("draft")


    def _unused(context):
        context.memory.set("orphan", 1)


    async def lookup(code, context=None):
        _store(context, {"id": code})
        context.memory.set(CUSTOMER, code)
        for key, value in {}.items():
            context.memory.set(key, value)
        context.memory.set(key="by_keyword", value=1)
        context.memory.set(NOT_A_KEY, 1)
        cache.set("not_memory", 1)
        context.memory.get("read_only")


    async def quiet(context=None):
        return None
    """
)


def _lines() -> dict[str, int]:
    tree = ast.parse(SOURCE)
    return {n.name: n.lineno for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef)}


def test_function_writes_include_same_module_helpers() -> None:
    scan = scan_memory_writes(ast.parse(SOURCE))
    lookup = scan.by_def_line[_lines()["lookup"]]
    assert [(w.key, w.method) for w in lookup] == [
        ("complaint_id", "set"),
        ("draft", "clear"),
        ("project.customer_id", "set"),
        (None, "set"),
        ("by_keyword", "set"),
        (None, "set"),
    ]
    assert lookup[0] == MemoryWrite(key="complaint_id", line=7, method="set")
    assert scan.by_def_line[_lines()["quiet"]] == ()


def test_module_writes_include_unreached_helpers() -> None:
    scan = scan_memory_writes(ast.parse(SOURCE))
    keys = [w.key for w in scan.writes]
    assert "orphan" in keys
    assert "not_memory" not in keys
    assert "read_only" not in keys
    assert [w.line for w in scan.writes] == sorted(w.line for w in scan.writes)


def test_recursive_helpers_terminate() -> None:
    source = textwrap.dedent(
        """
        def ping(context):
            context.memory.set("a", 1)
            pong(context)

        def pong(context):
            context.memory.set("b", 1)
            ping(context)
        """
    )
    scan = scan_memory_writes(ast.parse(source))
    assert [w.key for w in scan.by_def_line[2]] == ["a", "b"]
