"""Tools of the change_plan skill: list plans and switch the customer's plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keel.tools import ToolContext, ToolResult, tool

DATA = Path(__file__).resolve().parents[2] / "data"


def _read(name: str) -> dict[str, Any]:
    with (DATA / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


async def run_after_setting_new_plan(context: ToolContext) -> ToolResult:
    """Reject the plan the customer already has; otherwise remember its name and price."""
    new_plan = context.memory.get("new_plan")
    if new_plan == context.memory.get("project.plan_id"):
        return ToolResult(error="The customer is already on that plan; ask which other plan.")
    plan = _read("plans.json").get(new_plan or "")
    if plan is None:
        return ToolResult(error=f"There is no plan called {new_plan!r}.")
    context.memory.set("new_plan_name", plan["name"])
    price = f"{plan['monthly_price']:.2f}"
    context.memory.set("new_monthly_price", price)
    return ToolResult(llm_response={"new_plan": plan["name"], "monthly_price": price})


@tool(
    description="List the broadband plans Brightwave sells, with speeds and monthly prices.",
    effect="read_only",
)
async def list_plans(*, context: ToolContext) -> ToolResult:
    """All plans, marking the customer's current one."""
    current = context.memory.get("project.plan_id")
    plans = [
        {"id": plan_id, **plan, "current": plan_id == current}
        for plan_id, plan in _read("plans.json").items()
    ]
    return ToolResult(llm_response={"plans": plans})


@tool(description="Switch the customer to the plan recorded in new_plan, from the next bill.")
async def switch_plan(*, context: ToolContext) -> ToolResult:
    """Change the plan (the demo does not write the change back to the data file).

    Fails while the customer's contract on the current plan still runs.
    """
    account = _read("accounts.json").get(context.memory.get("project.customer_id") or "")
    new_plan = context.memory.get("new_plan")
    plan = _read("plans.json").get(new_plan or "")
    if account is None or plan is None:
        return ToolResult(error="Verify the customer and record the new plan first.")
    if account["contract_locked_until"]:
        context.memory.set("locked_until", account["contract_locked_until"])
        return ToolResult(error=f"Contract runs until {account['contract_locked_until']}.")
    context.memory.set("project.plan_id", new_plan)
    context.memory.set("project.plan_name", plan["name"])
    context.memory.set("plan_switched", True)
    return ToolResult(llm_response={"switched_to": plan["name"], "from": "next bill"})
