"""Tools of the renew_loan skill: the loan renewal and the book id's post-write hook."""

from __future__ import annotations

from keel.tools import ToolContext, ToolResult, tool

LOANS = {"B-10002": "2026-03-01", "B-10003": "2026-03-08"}
"""The books on loan and their due dates."""


async def run_after_setting_book_id(context: ToolContext) -> ToolResult:
    """Only a book on loan can be renewed."""
    book_id = context.memory.get("book_id")
    if book_id not in LOANS:
        return ToolResult(error=f"No book {book_id} is on loan.")
    return ToolResult(llm_response={"book_id": book_id, "due": LOANS[book_id]})


@tool(description="Extend the loan of a borrowed book.")
async def extend_loan(book_id: str, weeks: int, *, context: ToolContext) -> ToolResult:
    """Renew.

    Args:
        book_id: The book's id.
        weeks: How many more weeks.
    """
    context.memory.set("due", f"{LOANS[book_id]} +{weeks}w")
    return ToolResult(llm_response={"book_id": book_id, "weeks": weeks})
