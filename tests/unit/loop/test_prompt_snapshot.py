"""One whole prompt, written out, so any wording change is a deliberate edit here."""

from __future__ import annotations

from prompt_kit import PARCEL, inputs

from keel.loop.prompt import ActiveSkill, build_system_prompt

EXPECTED = "\n".join(
    [
        "You are Parcelo, a parcel assistant.",
        "",
        "## Rules",
        "- Be kind.",
        "",
        "## Skills",
        "Skills of this assistant (id: name):",
        "- redirect_parcel: Redirect Parcel",
        "- billing: Billing",
        "",
        "## Channel",
        "This is a text chat. Keep replies short and plain; use a list only when it makes "
        "things clearer.",
        "",
        "## Framework tools",
        "- activate: start the skill whose id you pass as target_id, when the user's request "
        "matches it. Instructions may name the skill `<id>` or the ordered block `<id>`; to "
        "enter one, call activate with that id.",
        "- set_fields: record values the user actually stated for entries marked [settable]; "
        "never guess or invent a value.",
        "- cancel_skill: call when the user drops or no longer needs the active skill.",
        "",
        "## Active skill: Redirect Parcel (`redirect_parcel`)",
        "",
        "Help the user redirect parcel @memory.redirect_parcel.parcel_id with reroute.",
        "",
        "Mention the customs fee.",
        "",
        "Begin with the ordered block `main`.",
        "",
        "## Waiting for the user",
        "- listen: call it alone, with no text, to wait silently for the user (for example when "
        "they have not finished).",
        "",
        "### Collecting now: `parcel_id`",
        "The user has been asked for `parcel_id` (Tracking number). When their reply gives it, "
        "record it with set_fields.",
        "",
        "### Memory:",
        "- parcel_id: (not set) [settable] — Tracking number",
        "- is_international: true",
        "",
        "## Project memory",
        "- customer_name: Ana",
        "- phone: [set]",
        "",
        "## Now",
        "It is Thursday 2026-01-01 09:30 UTC.",
        "",
        "## Already sent",
        "These messages were just sent to the user word for word. Do not repeat or paraphrase "
        "them; carry on from there.",
        "> Which parcel is it? Please give me the tracking number.",
    ]
)


def test_full_prompt_of_a_small_skill_at_a_collect_step() -> None:
    prompt = build_system_prompt(
        inputs(
            ActiveSkill(document=PARCEL, block_id="main", step=PARCEL.blocks[0].steps[0]),
            offered_tools=frozenset({"activate", "set_fields", "cancel_skill", "listen"}),
            memory={
                "project.customer_name": "Ana",
                "project.phone": "+49 30 123",
                "redirect_parcel.is_international": True,
            },
            canned_replies=("Which parcel is it? Please give me the tracking number.",),
        )
    )
    assert prompt == EXPECTED
