"""Who is signed in: `get_user_details` signs the customer in, the other tools read it.

The customer is signed in by code: a successful `get_user_details` writes the user id into
project memory (`project.user_id`, write-once, so one customer per conversation), and every
account tool's `requires` gate waits for it (`skills/airline_service/skill.md`). The model
cannot write project memory, so a user id it only mentions signs nobody in.
"""

from __future__ import annotations

from airlinedb.policy import Refusal, owner_problem
from keel.tools import ToolContext

USER_KEY = "project.user_id"


def signed_in(context: ToolContext | None) -> str | None:
    """The signed-in customer's user id, if any."""
    value = context.memory.get(USER_KEY) if context is not None else None
    return str(value) if value is not None else None


def sign_in(context: ToolContext | None, user_id: str) -> Refusal | None:
    """Sign `user_id` in, unless another customer already is."""
    current = signed_in(context)
    problem = owner_problem(user_id, current)
    if problem is None and current is None and context is not None:
        context.memory.set(USER_KEY, user_id)
    return problem


def owner_refusal(context: ToolContext | None, owner: str) -> Refusal | None:
    """A refusal when `owner` is not the signed-in customer."""
    return owner_problem(owner, signed_in(context))
