"""Builder tools: the `@tool` decorator, schemas from type hints, loading and discovery.

    from keel.tools import ToolContext, ToolResult, tool

    @tool(description="Find a parcel by tracking number.")
    async def lookup_parcel(tracking_no: str, context: ToolContext | None = None) -> ToolResult:
        ...

Mantle modules importing `rasa.mantle.tools.*` (or the older `rasa.calm_v2.tools.*`) load
unchanged through `keel.tools.compat`.
"""

from keel.tools.coerce import coerce_arguments
from keel.tools.compat import install_compat_shim
from keel.tools.context import (
    LocalMemory,
    LocalToolContext,
    MemoryAccess,
    ToolContext,
    current_tool_context,
    use_tool_context,
)
from keel.tools.decorator import tool, tool_definition
from keel.tools.definition import (
    HookDefinition,
    MemoryWrite,
    ToolDefinition,
    ToolDefinitionError,
)
from keel.tools.discovery import RESERVED_TOOL_NAMES, ToolCatalog, discover_tools
from keel.tools.dispatch import HookRun, ToolRun, run_hook, run_tool
from keel.tools.invoke import invoke_hook, invoke_tool
from keel.tools.load import ToolModule, load_tool_file, load_tool_module
from keel.tools.result import InvalidMemoryValue, ToolResult, to_result_text
from keel.tools.validation import ArgumentProblem, retryable_error_text, validate_arguments

__all__ = [
    "RESERVED_TOOL_NAMES",
    "ArgumentProblem",
    "HookDefinition",
    "HookRun",
    "InvalidMemoryValue",
    "LocalMemory",
    "LocalToolContext",
    "MemoryAccess",
    "MemoryWrite",
    "ToolCatalog",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolModule",
    "ToolResult",
    "ToolRun",
    "coerce_arguments",
    "current_tool_context",
    "discover_tools",
    "install_compat_shim",
    "invoke_hook",
    "invoke_tool",
    "load_tool_file",
    "load_tool_module",
    "retryable_error_text",
    "run_hook",
    "run_tool",
    "to_result_text",
    "tool",
    "tool_definition",
    "use_tool_context",
    "validate_arguments",
]
