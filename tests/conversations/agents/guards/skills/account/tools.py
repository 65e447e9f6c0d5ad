"""Tools of the account skill: gated, confirmed, failing, retried and slow ones."""

from __future__ import annotations

import asyncio

from keel.tools import ToolContext, ToolResult, tool


async def run_after_setting_nickname(context: ToolContext) -> ToolResult:
    """Reject the nickname "bad"."""
    if context.memory.get("nickname") == "bad":
        return ToolResult(error="That nickname is not allowed.")
    return ToolResult(llm_response={"nickname": "ok"})


@tool(description="Verify the customer with their PIN.")
async def verify(pin: str, *, context: ToolContext) -> ToolResult:
    """Verify; PIN 1234 is right.

    Args:
        pin: The PIN.
    """
    attempts = (context.memory.get("attempts") or 0) + 1
    context.memory.set("attempts", attempts)
    if pin != "1234":
        return ToolResult(llm_response={"verified": False, "attempts": attempts})
    context.memory.set("verified", True)
    context.memory.set("project.customer_id", "C-1")
    return ToolResult(llm_response={"verified": True})


@tool(description="Lock the account again (the customer is no longer verified).")
async def lock(*, context: ToolContext) -> ToolResult:
    """Un-verify the customer."""
    context.memory.set("verified", False)
    return ToolResult(llm_response={"locked": True})


@tool(description="Refund the last charge.")
async def refund(*, context: ToolContext) -> ToolResult:
    """Refund (gated by verified)."""
    context.memory.set("refunded", True)
    return ToolResult(llm_response={"refunded": True})


@tool(description="A risky operation, allowed while fewer than three attempts were made.")
async def risky_op(*, context: ToolContext) -> ToolResult:
    """Gated by a condition that cannot be evaluated while attempts is unset."""
    return ToolResult(llm_response={"done": True})


@tool(description="Transfer money to someone.")
async def transfer(amount: int, to: str, *, context: ToolContext) -> ToolResult:
    """Transfer; more than 1000 fails.

    Args:
        amount: Whole pounds.
        to: Who receives it.
    """
    if amount > 1000:
        return ToolResult(error="Transfers above 1000 are not allowed.")
    return ToolResult(llm_response={"sent": amount, "to": to})


@tool(description="Ask for a transfer amount to be confirmed later.")
async def note_amount(amount: int, *, context: ToolContext) -> ToolResult:
    """Remember the amount (the confirmation question shows it).

    Args:
        amount: Whole pounds.
    """
    context.memory.set("last_amount", amount)
    return ToolResult(llm_response={"noted": amount})


@tool(description="Close the account (the model words the confirmation question).")
async def close_account(*, context: ToolContext) -> ToolResult:
    """Close it."""
    return ToolResult(llm_response={"closed": True})


@tool(description="Charge a fee.")
async def charge(amount: int, *, context: ToolContext) -> ToolResult:
    """Charge; a negative amount raises.

    Args:
        amount: Whole pounds.
    """
    if amount < 0:
        raise ValueError("negative charge")
    return ToolResult(llm_response={"charged": amount})


@tool(description="Ping the bank.")
async def ping(n: int, *, context: ToolContext) -> ToolResult:
    """Answer pong.

    Args:
        n: A number.
    """
    return ToolResult(llm_response={"pong": n})


@tool(description="Start a slow job that never finishes by itself.")
async def slow_job(*, context: ToolContext) -> ToolResult:
    """Write memory first, then wait forever (the test cancels the turn)."""
    context.memory.set("job_started", True)
    await asyncio.Event().wait()
    return ToolResult(llm_response={"finished": True})
