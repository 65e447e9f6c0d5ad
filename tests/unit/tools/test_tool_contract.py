"""Plan contracts declared on `@tool(...)`, and the read-only hint of MCP tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from keel.mcp.resolve import mcp_tool_definition
from keel.mcp.schema_fix import FixedSchema
from keel.project.mcp_servers import McpServerConfig
from keel.tools import ToolDefinitionError, tool
from keel.tools.contract import ToolContract
from keel.tools.decorator import tool_definition
from keel.tools.load import load_tool_module
from keel.tools.result import ToolResult

WriteProject = Callable[[dict[str, str]], Path]


def test_a_tool_without_a_contract_gets_the_fail_closed_default() -> None:
    @tool(description="Look up an order.")
    async def get_order(order_id: str) -> str:
        return order_id

    definition = tool_definition(get_order)
    assert definition is not None
    assert definition.contract == ToolContract()
    assert definition.contract.effectful and not definition.contract.declared


def test_every_keyword_lands_in_the_contract() -> None:
    @tool(
        description="Cancel an order.",
        effect="write",
        bindings={"order_id": "request", "reason": "structural"},
        idempotency_key=("order_id",),
        output_schema={"type": "object", "properties": {"status": {"type": "string"}}},
        runtime_resolved={"user_id"},
        outbound_args=["reason"],
        verbs=["call off"],
    )
    async def cancel_order(order_id: str, reason: str, user_id: str) -> str:
        return order_id

    definition = tool_definition(cancel_order)
    assert definition is not None
    contract = definition.contract
    assert contract.declared and contract.effect == "write"
    assert dict(contract.bindings) == {"order_id": "request", "reason": "structural"}
    assert contract.binding("user_id") == "request"
    assert contract.idempotency_key == ("order_id",)
    assert contract.output_schema is not None and contract.output_schema["type"] == "object"
    assert contract.runtime_resolved == frozenset({"user_id"})
    assert contract.outbound_args == frozenset({"reason"})
    assert contract.verbs == ("call off",)


def test_a_read_only_tool() -> None:
    @tool(description="List files.", effect="read_only")
    async def list_files(path: str) -> str:
        return path

    definition = tool_definition(list_files)
    assert definition is not None and not definition.contract.effectful


@pytest.mark.parametrize(
    ("keywords", "fragment"),
    [
        ({"effect": "explode"}, "effect 'explode'"),
        ({"bindings": {"x": "somewhere"}}, "binding 'somewhere'"),
        ({"bindings": ["x"]}, "bindings must map"),
        ({"idempotency_key": "x"}, "idempotency_key must be a list"),
        ({"verbs": [1]}, "verbs must be a list"),
        ({"output_schema": "object"}, "output_schema must be"),
        ({"effects": "write"}, "unexpected keyword(s) effects"),
    ],
)
def test_bad_values_raise_at_decoration(keywords: dict[str, object], fragment: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        tool(description="d", **keywords)  # type: ignore[call-overload]
    assert fragment in info.value.message


def test_a_contract_naming_an_unknown_argument_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool(description="d", bindings={"ghost": "request"}, runtime_resolved=["user"])
        async def f(x: str) -> str:
            return x

    assert "ghost, user" in info.value.message and "it takes x" in info.value.message
    assert info.value.function == "f"


@pytest.mark.parametrize(
    ("decorator", "line", "fragment"),
    [
        ("@tool(description='d', effect='nuke')", 4, "effect 'nuke'"),
        ("@tool(description='d', bindings={'y': 'request'})", 5, "argument(s) y"),
    ],
    ids=["bad value (decorator line)", "unknown argument (def line)"],
)
def test_a_bad_contract_in_a_tool_file_is_a_diagnostic(
    write_project: WriteProject, decorator: str, line: int, fragment: str
) -> None:
    source = f"from keel.tools import tool\n\n\n{decorator}\nasync def f(x: str):\n    pass\n"
    root = write_project({"tools/c.py": source})
    tools, _hooks, diagnostics = load_tool_module(
        root / "tools/c.py", project_root=root, module_name=f"keel_test_load.c_{line}"
    )
    assert tools == ()
    (problem,) = diagnostics
    assert (problem.code, problem.severity, problem.line) == (
        "tool.definition.invalid",
        "error",
        line,
    )
    assert fragment in problem.message


def test_a_deferred_definition_keeps_its_contract(write_project: WriteProject) -> None:
    source = """
    from __future__ import annotations

    from typing import TypedDict

    from keel.tools import tool


    @tool(description="Book.", effect="send", bindings={"slot": "request"})
    async def book(slot: Slot) -> None:
        return None


    class Slot(TypedDict):
        day: str
    """
    root = write_project({"tools/later.py": source})
    tools, _hooks, diagnostics = load_tool_module(
        root / "tools/later.py", project_root=root, module_name="keel_test_load.later_c"
    )
    assert diagnostics == []
    (book,) = tools
    assert book.contract.effect == "send" and dict(book.contract.bindings) == {"slot": "request"}


class _Caller:
    async def call_tool(self, server: str, tool: str, arguments: object) -> ToolResult:
        return ToolResult()


@pytest.mark.parametrize(
    ("hints", "effect", "declared"),
    [
        (mcp_types.ToolAnnotations(read_only_hint=True), "read_only", True),
        (mcp_types.ToolAnnotations(read_only_hint=False), "write", False),
        (mcp_types.ToolAnnotations(destructive_hint=False), "write", False),
        (None, "write", False),
    ],
)
def test_mcp_tools_are_read_only_only_when_hinted(
    hints: mcp_types.ToolAnnotations | None, effect: str, declared: bool
) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    remote = mcp_types.Tool(name="search", input_schema=schema, annotations=hints)
    definition = mcp_tool_definition(
        McpServerConfig(name="srv", line=3, url="http://127.0.0.1:1/mcp"),
        remote,
        FixedSchema(parameters=schema),
        _Caller(),
    )
    assert (definition.contract.effect, definition.contract.declared) == (effect, declared)
