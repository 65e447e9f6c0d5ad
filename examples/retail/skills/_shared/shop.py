"""Reading the store for the skills: customers, their orders and payment methods.

Pure functions over the database dict (`retaildb.current()`); they never change it. The
skills' hooks and tools call them and write what they return into memory, so every memory
write stays in a skill's own `tools.py`, where `keel validate` checks it.
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def find_user_by_email(db: Record, email: str) -> str | None:
    """The user id whose email matches (ignoring case and surrounding spaces)."""
    wanted = email.strip().lower()
    for user_id, user in db["users"].items():
        if user["email"].lower() == wanted:
            return str(user_id)
    return None


def find_user_by_name_zip(db: Record, first: str, last: str, zip_code: str) -> str | None:
    """The user id with this first and last name (any case) and default-address zip code."""
    first, last, zip_code = first.strip().lower(), last.strip().lower(), zip_code.strip()
    for user_id, user in db["users"].items():
        name = user["name"]
        if (
            name["first_name"].lower() == first
            and name["last_name"].lower() == last
            and user["address"]["zip"] == zip_code
        ):
            return str(user_id)
    return None


def full_name(user: Record) -> str:
    """`First Last`."""
    return f"{user['name']['first_name']} {user['name']['last_name']}"


def describe_address(address: Record) -> str:
    """One line: `12 Elm St, Apt 2, Austin, TX 73301, USA`."""
    street = ", ".join(part for part in (address["address1"], address["address2"]) if part)
    return f"{street}, {address['city']}, {address['state']} {address['zip']}, {address['country']}"


def describe_payment(method: Record) -> str:
    """How a payment method is named to the customer (the id is the key it is listed by)."""
    source = method["source"]
    if source == "gift_card":
        return f"gift card (balance {method['balance']:.2f})"
    if source == "credit_card":
        return f"{method['brand']} credit card ending {method['last_four']}"
    if source == "paypal":
        return "PayPal account"
    return str(method["id"])


def describe_item(item: Record) -> str:
    """`Headphones (type over-ear, color blue)`."""
    options = ", ".join(f"{key} {value}" for key, value in item["options"].items())
    return f"{item['name']} ({options})"


def profile(db: Record, user_id: str) -> Record:
    """What the model may know about the signed-in customer, as the store has it now."""
    user = db["users"][user_id]
    orders = []
    for order_id in user["orders"]:
        order = db["orders"].get(order_id)
        if order is not None:
            names = [item["name"] for item in order["items"]]
            orders.append({"order_id": order_id, "status": order["status"], "items": names})
    return {
        "name": full_name(user),
        "email": user["email"],
        "default_address": describe_address(user["address"]),
        "payment_methods": {key: describe_payment(m) for key, m in user["payment_methods"].items()},
        "orders": orders,
    }


def normalise_order_id(raw: str) -> str:
    """`w2378156`, `#W2378156 `, `W 2378156` or `2378156` -> `#W2378156`."""
    text = "".join(raw.split()).upper().lstrip("#")
    return f"#W{text}" if text.isdigit() else f"#{text}"


def owned_order(db: Record, user_id: str | None, raw_id: str) -> tuple[Record | None, str]:
    """The order, when it exists and belongs to `user_id`; else None and why not."""
    order_id = normalise_order_id(raw_id)
    order = db["orders"].get(order_id)
    if order is None:
        return None, f"There is no order {order_id}. Order ids look like #W1234567."
    if user_id is None or order["user_id"] != user_id:
        return None, (
            f"Order {order_id} is not on the signed-in customer's account, so it cannot be "
            "looked at or changed in this conversation."
        )
    return order, ""


def order_summary(db: Record, order: Record) -> str:
    """Items, total and how it was paid, in one line."""
    items = "; ".join(f"{describe_item(i)} {i['price']:.2f}" for i in order["items"])
    paid = sum(p["amount"] for p in order["payment_history"] if p["transaction_type"] == "payment")
    first = order["payment_history"][0]["payment_method_id"] if order["payment_history"] else None
    method = payment_name(db, order["user_id"], first) if first else "nothing yet"
    return f"{items}; total {paid:.2f}, paid with {method}"


def payment_name(db: Record, user_id: str, method_id: str) -> str:
    """A payment method of the user by name, or the bare id when it is not theirs."""
    method = db["users"][user_id]["payment_methods"].get(method_id)
    return describe_payment(method) if method is not None else method_id
