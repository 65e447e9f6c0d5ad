"""Shared loan tools: a skill uses them by listing them in `import_tools`.

A tool is an `async def` with `@tool(description=...)`: its type hints and the `Args:` of
its docstring become the argument schema the model sees; `effect=` is its plan contract
(`read_only` tools change nothing; anything else is a write).
"""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool

# A stand-in for the library system: book id -> (title, reserved by someone else).
LOANS = {"B-10002": ("The Left Hand of Darkness", False), "B-10417": ("Middlemarch", True)}


@tool(description="Check one of the member's loans.", effect="read_only")
async def check_loan(book_id: str, context: ToolContext) -> ToolResult:
    """Record the book's title and whether its loan may be renewed.

    Args:
        book_id: The id on the book's spine label, e.g. B-10002.
    """
    loan = LOANS.get(book_id.strip().upper())
    if loan is None:
        return ToolResult(error=f"No loan of a book {book_id!r} on this card.")
    title, reserved = loan
    context.memory.set("title", title)
    context.memory.set("renewable", not reserved)
    return ToolResult(llm_response={"title": title, "renewable": not reserved})
