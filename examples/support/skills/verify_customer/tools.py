"""Tools of the verify_customer skill: check an account number and security PIN."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from keel.tools import ToolContext, ToolResult, tool

DATA = Path(__file__).resolve().parents[2] / "data"
ACCOUNT_NUMBER = re.compile(r"BW\s?(\d{6})", re.IGNORECASE)


def _read(name: str) -> dict[str, Any]:
    with (DATA / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def normalise_account_number(raw: str) -> str | None:
    """`bw 100234` -> `BW100234`; None when it is not an account number at all."""
    match = ACCOUNT_NUMBER.fullmatch(raw.strip())
    return f"BW{match.group(1)}" if match else None


async def run_after_setting_account_number(context: ToolContext) -> ToolResult:
    """Reject an account number that cannot be one, before asking for the PIN."""
    value = context.memory.get("account_number")
    if not isinstance(value, str) or normalise_account_number(value) is None:
        return ToolResult(
            error="Account numbers are BW followed by six digits, for example BW100234."
        )
    return ToolResult(llm_response={"account_number": "looks valid"})


@tool(description="Check the customer's account number and security PIN.", effect="read_only")
async def verify_identity(account_number: str, pin: str, *, context: ToolContext) -> ToolResult:
    """Verify the customer; on success they count as verified for the rest of the session.

    Args:
        account_number: The account number as the customer gave it.
        pin: The four-digit security PIN as the customer gave it.
    """
    number = normalise_account_number(account_number)
    account = _read("accounts.json").get(number or "")
    seeded = context.memory.get("project.customer_id")
    if account is None or (seeded is not None and seeded != number):
        # Unknown account (or not the account this channel is signed in to): ask for both.
        context.memory.clear("account_number")
        context.memory.clear("pin")
        return _failed(context, "account_not_found")
    if pin.strip() != account["pin"]:
        context.memory.clear("pin")
        return _failed(context, "wrong_pin")
    if seeded is None:
        context.memory.set("project.customer_id", number)
    plan = _read("plans.json")[account["plan_id"]]
    context.memory.set("project.authenticated", True)
    context.memory.set("project.customer_name", account["name"])
    context.memory.set("project.plan_id", account["plan_id"])
    context.memory.set("project.plan_name", plan["name"])
    return ToolResult(llm_response={"verified": True, "customer_name": account["name"]})


def _failed(context: ToolContext, reason: str) -> ToolResult:
    left = max(int(context.memory.get("attempts_left") or 0) - 1, 0)
    context.memory.set("attempts_left", left)
    if left == 0:
        context.memory.set("verification_locked", True)
    return ToolResult(llm_response={"verified": False, "reason": reason, "attempts_left": left})
