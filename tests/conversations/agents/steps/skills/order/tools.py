"""Tools of the order skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Look up whether a name belongs to a member.")
async def lookup_member(name: str, *, context: ToolContext) -> ToolResult:
    """Members are the names starting with M.

    Args:
        name: The name the order is under.
    """
    member = name.startswith("M")
    context.memory.set("member", member)
    return ToolResult(llm_response={"member": member})


@tool(description="Place the pizza order.")
async def place_order(size: str, topping: str, *, context: ToolContext) -> ToolResult:
    """Place the order.

    Args:
        size: small or large.
        topping: The topping.
    """
    placed = context.memory.get("project.orders_placed") or 0
    context.memory.set("project.orders_placed", placed + 1)
    return ToolResult(llm_response={"placed": True, "size": size, "topping": topping})
