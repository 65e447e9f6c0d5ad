"""Customer profile tools: read a profile, and issue a travel certificate as a goodwill gesture."""

from __future__ import annotations

import airlinedb

from keel.tools import ToolResult, tool

CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""Ids given to new certificates, the first one the user does not hold yet."""


@tool(
    description=(
        "Read a customer's profile: name, contact, date of birth, membership tier, saved "
        "passengers, payment methods (with gift card and certificate balances) and "
        "reservation ids."
    )
)
async def get_user_details(user_id: str) -> ToolResult:
    """The stored profile, as it is.

    Args:
        user_id: The customer's user id, e.g. 'sara_doe_496'.
    """
    record = airlinedb.user(user_id)
    if record is None:
        return ToolResult(error="user not found")
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Add a travel certificate worth `amount` dollars to a customer's payment methods. "
        "Only as compensation the policy allows, after the customer asked for it."
    )
)
async def send_certificate(user_id: str, amount: int | float) -> ToolResult:
    """Store a new certificate payment method and say which id it got.

    Args:
        user_id: The customer's user id, e.g. 'sara_doe_496'.
        amount: The certificate's value in dollars.
    """
    record = airlinedb.writable_user(user_id)
    if record is None:
        return ToolResult(error="user not found")
    methods = record["payment_methods"]
    free = next((pid for pid in CERTIFICATE_IDS if pid not in methods), None)
    if free is None:
        return ToolResult(error="no certificate id left for this user")
    methods[free] = {"source": "certificate", "amount": amount, "id": free}
    return ToolResult(
        llm_response=f"Certificate {free} added to user {user_id} with amount {amount}."
    )
