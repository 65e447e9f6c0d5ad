"""Tools of the renew_loan skill, and a post-write hook for `book_id`."""

from __future__ import annotations

import re

from keel.tools import ToolContext, ToolResult, tool

BOOK_ID = re.compile(r"B-\d{5}")


async def run_after_setting_book_id(context: ToolContext) -> ToolResult:
    """Refuse text that is no book id, so the question is asked again."""
    value = context.memory.get("book_id")
    if not isinstance(value, str) or BOOK_ID.fullmatch(value.strip().upper()) is None:
        return ToolResult(error="A book id looks like B-10002.")
    return ToolResult(llm_response={"book_id": "accepted"})


@tool(description="Renew a loan for three more weeks.", effect="write")
async def renew(book_id: str, context: ToolContext) -> ToolResult:
    """Extend the loan of one book.

    Args:
        book_id: The id on the book's spine label, e.g. B-10002.
    """
    due = "21 March"  # a real tool would ask the library system
    context.memory.set("due", due)
    return ToolResult(llm_response={"book_id": book_id, "due": due})
