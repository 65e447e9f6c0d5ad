"""Tools of the renewal skill."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool


@tool(description="Renew a book's loan by two weeks.")
async def renew_loan(book: str, *, context: ToolContext) -> ToolResult:
    """Renew; a lost book cannot be renewed (and its due date is not known).

    Args:
        book: The title.
    """
    if book == "Lost":
        return ToolResult(error="That copy is lost.")
    context.memory.set("new_due_date", "2026-02-01")
    return ToolResult(llm_response={"book": book, "due": "2026-02-01"})
