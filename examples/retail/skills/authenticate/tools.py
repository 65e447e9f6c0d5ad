"""Sign-in hooks: an email, or a first name + last name + zip code, finds the account.

The customer is signed in by code, never by the model: a hook finds the user id and writes
it into project memory, where it is write-once (one customer per conversation). A value
that matches no account is refused, so the model hears why and asks again.
"""

from __future__ import annotations

from retaildb import current
from skills._shared.shop import find_user_by_email, find_user_by_name_zip, full_name, profile

from keel.tools import ToolContext, ToolResult


def _sign_in(context: ToolContext, user_id: str) -> ToolResult:
    signed_in = context.memory.get("project.user_id")
    if signed_in is not None and signed_in != user_id:
        return ToolResult(error="Another customer is already signed in to this conversation.")
    db = current()
    user = db["users"][user_id]
    if signed_in is None:
        context.memory.set("project.user_id", user_id)
        context.memory.set("project.user_name", full_name(user))
    context.memory.set("project.profile", profile(db, user_id))
    return ToolResult(llm_response={"signed_in": True, "name": full_name(user)})


async def run_after_setting_email(context: ToolContext) -> ToolResult:
    """Sign in with the email, or refuse an email no account has."""
    email = context.memory.get("email")
    user_id = find_user_by_email(current(), str(email or ""))
    if user_id is None:
        return ToolResult(
            error="No account uses that email. Ask the customer to check it, or to give "
            "their first name, last name and zip code instead."
        )
    return _sign_in(context, user_id)


def _by_name_and_zip(context: ToolContext) -> ToolResult:
    first, last, zip_code = (context.memory.get(k) for k in ("first_name", "last_name", "zip"))
    if first is None or last is None or zip_code is None:
        return ToolResult(llm_response={"recorded": True})
    user_id = find_user_by_name_zip(current(), str(first), str(last), str(zip_code))
    if user_id is None:
        return ToolResult(
            error="No account matches that first name, last name and zip code. Ask the "
            "customer to check them."
        )
    return _sign_in(context, user_id)


async def run_after_setting_first_name(context: ToolContext) -> ToolResult:
    """Sign in once first name, last name and zip code are all recorded."""
    return _by_name_and_zip(context)


async def run_after_setting_last_name(context: ToolContext) -> ToolResult:
    """Sign in once first name, last name and zip code are all recorded."""
    return _by_name_and_zip(context)


async def run_after_setting_zip(context: ToolContext) -> ToolResult:
    """Sign in once first name, last name and zip code are all recorded."""
    return _by_name_and_zip(context)
