"""Shared account tools. A skill sees them only when it lists them in `import_tools`.

The demo reads its accounts from `data/*.json` and never changes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keel.tools import ToolContext, ToolResult, tool

DATA = Path(__file__).resolve().parent.parent / "data"


def _read(name: str) -> dict[str, Any]:
    with (DATA / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


@tool(
    description="Load the profile of the signed-in customer at the start of a conversation.",
    effect="read_only",
)
async def load_profile(customer_id: str, *, context: ToolContext) -> ToolResult:
    """Copy name and plan of a known account into project memory.

    Args:
        customer_id: Account number the channel sent with the session (e.g. BW100234).
    """
    account = _read("accounts.json").get(customer_id.strip().upper())
    if account is None:
        return ToolResult(llm_response={"found": False})
    plan = _read("plans.json")[account["plan_id"]]
    context.memory.set("project.customer_name", account["name"])
    context.memory.set("project.plan_id", account["plan_id"])
    context.memory.set("project.plan_name", plan["name"])
    return ToolResult(llm_response={"found": True, "plan": plan["name"]})


@tool(description="Summarise the verified customer's account: plan, price, balance and due date.")
async def get_account_summary(*, context: ToolContext) -> ToolResult:
    """Read the account of `session.project.customer_id`."""
    customer_id = context.memory.get("project.customer_id")
    if not context.memory.get("project.authenticated") or customer_id is None:
        return ToolResult(error="The customer is not verified yet.")
    account = _read("accounts.json").get(customer_id)
    if account is None:
        return ToolResult(error=f"No account {customer_id} on file.")
    plan = _read("plans.json")[account["plan_id"]]
    return ToolResult(
        llm_response={
            "plan": plan["name"],
            "monthly_price": plan["monthly_price"],
            "balance_due": account["balance_due"],
            "due_date": account["due_date"],
            "autopay": account["autopay"],
            "contract_locked_until": account["contract_locked_until"],
            "late_fees_last_12_months": account["late_fees_last_12_months"],
        }
    )
