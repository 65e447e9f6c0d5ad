"""Read-only retail tools: find a user, show a user, an order, a product, the catalogue."""

from __future__ import annotations

from retaildb import current, failure, success

from keel.tools import ToolResult, tool


@tool(description="Look up a customer's user id from their email address.", effect="read_only")
async def find_user_id_by_email(email: str) -> ToolResult:
    """Case-insensitive match on the stored email.

    Args:
        email: The customer's email address, e.g. 'name@example.com'.
    """
    wanted = email.lower()
    for user_id, user in current()["users"].items():
        if user["email"].lower() == wanted:
            return success(user_id)
    return failure("user not found")


@tool(
    description="Look up a customer's user id from their first name, last name and zip code.",
    effect="read_only",
)
async def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str) -> ToolResult:
    """Names match case-insensitively, the zip code exactly. Prefer the email lookup.

    Args:
        first_name: The customer's first name, e.g. 'Ana'.
        last_name: The customer's last name, e.g. 'Silva'.
        zip: The zip code of the customer's default address, e.g. '90210'.
    """
    first, last = first_name.lower(), last_name.lower()
    for user_id, user in current()["users"].items():
        name = user["name"]
        if (
            name["first_name"].lower() == first
            and name["last_name"].lower() == last
            and user["address"]["zip"] == zip
        ):
            return success(user_id)
    return failure("user not found")


@tool(
    description="Show a customer's profile: name, address, email, payment methods, orders.",
    effect="read_only",
    bindings={"user_id": "piped"},
)
async def get_user_details(user_id: str) -> ToolResult:
    """The stored user record.

    Args:
        user_id: The user id, e.g. 'ana_silva_1234'.
    """
    user = current()["users"].get(user_id)
    return failure("user not found") if user is None else success(user)


@tool(
    description="Show an order: status, items, address, fulfilments and payments.",
    effect="read_only",
)
async def get_order_details(order_id: str) -> ToolResult:
    """The stored order record.

    Args:
        order_id: The order id, starting with '#', e.g. '#W1234567'.
    """
    order = current()["orders"].get(order_id)
    return failure("order not found") if order is None else success(order)


@tool(
    description="Show a product and all its variant items with options, price, availability.",
    effect="read_only",
    bindings={"product_id": "piped"},
)
async def get_product_details(product_id: str) -> ToolResult:
    """The stored product record. A product id is not an item id.

    Args:
        product_id: The product id, e.g. '1234567890'.
    """
    product = current()["products"].get(product_id)
    return failure("product not found") if product is None else success(product)


@tool(
    description="List every product type in the store by name, with its product id.",
    effect="read_only",
)
async def list_all_product_types() -> ToolResult:
    """Product name -> product id, sorted by name (the store has 50 product types)."""
    by_name = {p["name"]: p["product_id"] for p in current()["products"].values()}
    return success(dict(sorted(by_name.items())))
