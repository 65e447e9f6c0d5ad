"""Customer profile tools: read a profile, and issue a travel certificate as a goodwill gesture."""

from __future__ import annotations

import airlinedb
from airlinedb.policy import certificate_problem
from airlinedb.session import owner_refusal, sign_in

from keel.tools import ToolContext, ToolResult, tool

CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""Ids given to new certificates, the first one the user does not hold yet."""


@tool(
    description=(
        "Read a customer's profile: name, contact, date of birth, membership tier, saved "
        "passengers, payment methods (with gift card and certificate balances) and "
        "reservation ids. The first profile read signs that customer in for the conversation."
    )
)
async def get_user_details(user_id: str, *, context: ToolContext | None = None) -> ToolResult:
    """The stored profile, as it is; the customer is signed in (one per conversation).

    Args:
        user_id: The customer's user id, e.g. 'sara_doe_496'.
    """
    record = airlinedb.user(user_id)
    if record is None:
        return ToolResult(error="user not found")
    problem = airlinedb.enforced(sign_in(context, user_id))
    if problem is not None:
        return ToolResult(error=problem.error)
    return ToolResult(llm_response=airlinedb.dumps(record))


@tool(
    description=(
        "Add a travel certificate worth `amount` dollars to a customer's payment methods. "
        "Only as compensation the policy allows, after the customer asked for it."
    )
)
async def send_certificate(
    user_id: str, amount: int | float, *, context: ToolContext | None = None
) -> ToolResult:
    """Store a new certificate payment method and say which id it got.

    Args:
        user_id: The customer's user id, e.g. 'sara_doe_496'.
        amount: The certificate's value in dollars.
    """
    found = airlinedb.user(user_id)
    if found is None:
        return ToolResult(error="user not found")
    problem = airlinedb.enforced(
        owner_refusal(context, user_id)
        or certificate_problem(
            found, airlinedb.current()["reservations"], airlinedb.store().cabins, amount
        )
    )
    if problem is not None:
        return ToolResult(error=problem.error)
    record = airlinedb.writable_user(user_id)
    assert record is not None  # found just above
    methods = record["payment_methods"]
    free = next((pid for pid in CERTIFICATE_IDS if pid not in methods), None)
    if free is None:
        return ToolResult(error="no certificate id left for this user")
    methods[free] = {"source": "certificate", "amount": amount, "id": free}
    return ToolResult(
        llm_response=f"Certificate {free} added to user {user_id} with amount {amount}."
    )
