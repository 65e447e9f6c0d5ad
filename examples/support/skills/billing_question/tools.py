"""Tools of the billing_question skill: the latest invoice and billing disputes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from keel.tools import ToolContext, ToolResult, tool

DATA = Path(__file__).resolve().parents[2] / "data"


def _account(context: ToolContext) -> dict[str, Any] | None:
    customer_id = context.memory.get("project.customer_id")
    with (DATA / "accounts.json").open(encoding="utf-8") as handle:
        accounts: dict[str, Any] = json.load(handle)
    account: dict[str, Any] | None = accounts.get(customer_id or "")
    return account


async def run_after_setting_disputed_amount(context: ToolContext) -> ToolResult:
    """Reject a disputed amount that is not positive or exceeds the latest invoice."""
    amount = context.memory.get("disputed_amount")
    account = _account(context)
    if account is None:
        return ToolResult(error="No account on file for this customer.")
    total = account["invoices"][-1]["total"]
    if not isinstance(amount, int | float) or not 0 < amount <= total:
        return ToolResult(error=f"The disputed amount must be between 0 and {total:.2f}.")
    return ToolResult(llm_response={"disputed_amount": amount})


@tool(description="Fetch the customer's latest invoice with each line item.")
async def get_latest_invoice(*, context: ToolContext) -> ToolResult:
    """The most recent invoice of the verified customer."""
    account = _account(context)
    if account is None:
        return ToolResult(error="No account on file for this customer.")
    return ToolResult(llm_response=account["invoices"][-1])


@tool(description="Log a dispute about an amount on the latest invoice for the billing team.")
async def log_billing_dispute(reason: str, *, context: ToolContext) -> ToolResult:
    """Record the dispute and store its reference.

    The demo does not store disputes; the reference is derived from the account and the
    amount so it is stable within a conversation.

    Args:
        reason: One sentence, in the customer's words, saying why the amount is wrong.
    """
    account_id = context.memory.get("project.customer_id")
    amount = context.memory.get("disputed_amount")
    if account_id is None or amount is None:
        return ToolResult(error="Verify the customer and record the disputed amount first.")
    digest = hashlib.sha256(f"{account_id}|{amount}|{reason}".encode()).hexdigest()
    reference = f"BD-{int(digest[:8], 16) % 1_000_000:06d}"
    context.memory.set("dispute_reference", reference)
    return ToolResult(llm_response={"dispute_reference": reference, "amount": amount})
