"""Tools of the vault skill. Each forbidden tool writes memory, so a run would be visible."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


async def run_after_setting_note(context: ToolContext) -> ToolResult:
    """Post-write hook: the engine runs it, the model must never be able to call it."""
    if context.memory.get("note") == "poison":
        return ToolResult(error="That note cannot be kept.")
    return ToolResult(llm_response={"note": "kept"})


@tool(description="Open the vault (only while it is unlocked).")
async def open_vault(*, context: ToolContext) -> ToolResult:
    """Open the vault."""
    context.memory.set("secret_level", 9)
    return ToolResult(llm_response={"opened": True})


@tool(description="Peek into the vault (only once count is above three).")
async def peek(*, context: ToolContext) -> ToolResult:
    """Peek."""
    context.memory.set("secret_level", 7)
    return ToolResult(llm_response={"peeked": True})


@tool(description="Set the vault counter.")
async def set_count(value: int, *, context: ToolContext) -> ToolResult:
    """Set the counter that gates peek.

    Args:
        value: The new counter value.
    """
    context.memory.set("count", value)
    return ToolResult(llm_response={"count": value})


@tool(description="Repeat a text back to the user.")
async def echo(text: str, *, context: ToolContext) -> ToolResult:
    """Echo.

    Args:
        text: What to repeat.
    """
    return ToolResult(llm_response={"echo": text})


@tool(description="Shred everything in the vault (the user must confirm first).")
async def shred(*, context: ToolContext) -> ToolResult:
    """Shred the vault."""
    context.memory.set("secret_level", 0)
    return ToolResult(llm_response={"shredded": True})


@tool(description="Burn the note (only while there is one; the user must confirm first).")
async def burn(*, context: ToolContext) -> ToolResult:
    """Burn the note."""
    context.memory.set("secret_level", 1)
    return ToolResult(llm_response={"burnt": True})
