"""Tools of the report_outage skill: area network status and fault tickets."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from keel.tools import ToolContext, ToolResult, tool

DATA = Path(__file__).resolve().parents[2] / "data"
POSTCODE = re.compile(r"([A-Z]{1,2}\d{1,2})\s?\d[A-Z]{2}")


def _network() -> dict[str, Any]:
    with (DATA / "network.json").open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def postcode_area(raw: str) -> str | None:
    """`ln4 7qp` -> `LN4`; None when it is not a postcode."""
    match = POSTCODE.fullmatch(raw.strip().upper())
    return match.group(1) if match else None


async def run_after_setting_postcode(context: ToolContext) -> ToolResult:
    """Reject text that is not a postcode, so the question is asked again."""
    value = context.memory.get("postcode")
    if not isinstance(value, str) or postcode_area(value) is None:
        return ToolResult(error="That doesn't look like a postcode; it should look like LN4 7QP.")
    return ToolResult(llm_response={"postcode": "accepted"})


@tool(
    description="Check the broadband network status for the area of a postcode.",
    effect="read_only",
)
async def check_area_status(postcode: str, *, context: ToolContext) -> ToolResult:
    """Look up known faults for the postcode's area.

    Args:
        postcode: The customer's postcode, e.g. LN4 7QP.
    """
    area = postcode_area(postcode)
    if area is None:
        return ToolResult(error=f"{postcode!r} is not a postcode.")
    status = _network().get(area, {"status": "ok", "note": None, "eta": None})
    context.memory.set("area_status", status["status"])
    # Clear what an earlier check in this run may have left, so responses never mix areas.
    if status["note"]:
        context.memory.set("outage_note", status["note"])
    else:
        context.memory.clear("outage_note")
    if status["eta"]:
        context.memory.set("outage_eta", status["eta"])
    else:
        context.memory.clear("outage_eta")
    return ToolResult(llm_response={"area": area, **status})


@tool(description="Open a fault ticket for an engineer to check the customer's line.")
async def open_fault_ticket(
    postcode: str, priority: str, contact_channel: str, *, context: ToolContext
) -> ToolResult:
    """Open a ticket and store its reference.

    The demo does not store tickets; the reference is derived from the inputs so the
    same conversation always gets the same one.

    Args:
        postcode: Postcode of the affected address.
        priority: standard or high.
        contact_channel: How the customer wants updates: sms, email or phone.
    """
    if priority not in ("standard", "high"):
        return ToolResult(error=f"Unknown priority {priority!r}.")
    account = context.memory.get("project.customer_id") or "guest"
    digest = hashlib.sha256(f"{account}|{postcode}|{priority}".encode()).hexdigest()
    ticket_id = f"FT-{int(digest[:8], 16) % 1_000_000:06d}"
    context.memory.set("ticket_id", ticket_id)
    return ToolResult(
        llm_response={"ticket_id": ticket_id, "priority": priority, "updates_by": contact_channel}
    )
