"""Changes to a user's profile: the default address."""

from __future__ import annotations

from retaildb import current, failure, success

from keel.tools import ToolResult, tool


@tool(
    description="Change a customer's default address once they confirmed (existing orders keep "
    "their own address).",
    effect="write_idempotent",
    bindings={"user_id": "piped"},
)
async def modify_user_address(
    user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> ToolResult:
    """Answers with the whole user record after the change. Only after the customer
    confirmed the new address.

    Args:
        user_id: The user id, e.g. 'ana_silva_1234'.
        address1: Street address, e.g. '12 Elm Street'.
        address2: Apartment, suite or unit; '' when there is none.
        city: City, e.g. 'Austin'.
        state: State code, e.g. 'TX'.
        country: Country, e.g. 'USA'.
        zip: Zip code, e.g. '73301'.
    """
    user = current()["users"].get(user_id)
    if user is None:
        return failure("user not found")
    user["address"] = {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": country,
        "zip": zip,
    }
    return success(user)
