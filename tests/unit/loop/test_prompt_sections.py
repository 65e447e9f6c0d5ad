"""The fixed sections of the system prompt, one at a time (spec §11.2 sections 1-8)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from prompt_kit import ALL_FRAMEWORK_TOOLS, BILLING, CONFIG, PARCEL, SCHEMA, skill

from keel.loop.prompt_sections import (
    DEFAULT_ACK_RULE,
    DEFAULT_TEXT_RULES,
    DEFAULT_VOICE_RULES,
    LIFECYCLE_TOOLS,
    Channel,
    ack_section,
    canned_reminder,
    channel_section,
    glossary_section,
    lifecycle_section,
    out_of_scope_section,
    persona_section,
    project_memory_section,
    time_section,
)
from keel.project.config import AgentConfig, Prompts


def test_persona_then_rules() -> None:
    assert persona_section(CONFIG) == "You are Parcelo, a parcel assistant.\n\n## Rules\n- Be kind."


def test_persona_without_rules_has_no_rules_heading() -> None:
    assert persona_section(AgentConfig(persona="  Hi.\n")) == "Hi."


def test_glossary_lists_routable_skills_only() -> None:
    hidden = skill(
        """
        ---
        name: Hidden
        description: D
        routing:
          hidden: true
        ---
        Secret.
        """,
        "secret",
    )
    assert glossary_section((PARCEL, hidden, BILLING)) == (
        "## Skills\nSkills of this assistant (id: name):\n"
        "- redirect_parcel: Redirect Parcel\n- billing: Billing"
    )
    assert glossary_section((hidden,)) is None


@pytest.mark.parametrize(
    ("prompts", "channel", "rules"),
    [
        (Prompts(), "text", DEFAULT_TEXT_RULES),
        (Prompts(), "voice", DEFAULT_VOICE_RULES),
        (Prompts(text_rules="Use emoji."), "text", "Use emoji."),
        (Prompts(text_rules="Use emoji."), "voice", DEFAULT_VOICE_RULES),
        (Prompts(voice_rules="Spell ids."), "voice", "Spell ids."),
    ],
)
def test_channel_rules_with_overrides(prompts: Prompts, channel: Channel, rules: str) -> None:
    assert channel_section(prompts, channel) == f"## Channel\n{rules}"


@pytest.mark.parametrize(
    ("enabled", "channel", "first", "shown"),
    [
        (None, "voice", True, True),
        (None, "text", True, False),
        (True, "text", True, True),
        (False, "voice", True, False),
        (None, "voice", False, False),
        (True, "text", False, False),
    ],
)
def test_ack_section_only_when_enabled_on_the_first_call(
    enabled: bool | None, channel: Channel, first: bool, shown: bool
) -> None:
    section = ack_section(Prompts(ack_enabled=enabled), channel, first)
    assert (section == f"## Acknowledgement\n{DEFAULT_ACK_RULE}") is shown
    assert (section is None) is not shown


def test_ack_overrides_examples_and_reminder() -> None:
    prompts = Prompts(
        ack_enabled=True,
        ack_rule="Say a filler.",
        ack_examples=("One sec.", "Let me see."),
        ack_reminder="Keep it under five words.",
    )
    assert ack_section(prompts, "text", True) == (
        '## Acknowledgement\nSay a filler.\nExamples: "One sec.", "Let me see."\n'
        "Keep it under five words."
    )


@pytest.mark.parametrize("tool", LIFECYCLE_TOOLS)
def test_lifecycle_names_only_offered_tools(tool: str) -> None:
    alone = lifecycle_section(frozenset({tool}))
    assert alone is not None
    assert f"- {tool}: " in alone
    for other in ALL_FRAMEWORK_TOOLS - {tool}:
        assert other not in alone, other
    without = lifecycle_section(ALL_FRAMEWORK_TOOLS - {tool})
    assert without is not None
    assert f"- {tool}: " not in without


def test_lifecycle_keeps_a_fixed_order_and_ignores_other_tools() -> None:
    section = lifecycle_section(frozenset({"listen", "reroute", "activate"}))
    assert section is not None
    lines = section.splitlines()
    assert lines[0] == "## Framework tools"
    assert [line.split(":")[0] for line in lines[1:]] == ["- activate", "- listen"]


def test_lifecycle_explains_block_and_skill_references_with_activate() -> None:
    section = lifecycle_section(frozenset({"activate"}))
    assert section is not None
    assert "the skill `<id>`" in section
    assert "the ordered block `<id>`" in section


def test_no_lifecycle_section_without_framework_tools() -> None:
    assert lifecycle_section(frozenset({"reroute"})) is None


def test_out_of_scope_only_with_cannot_help() -> None:
    assert out_of_scope_section(frozenset({"activate"})) is None
    section = out_of_scope_section(frozenset({"cannot_help"}))
    assert section is not None
    assert section.startswith("## Out of scope\n")


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (datetime(2026, 1, 1, 9, 30, tzinfo=UTC), "Thursday 2026-01-01 09:30 UTC"),
        (datetime(2026, 3, 8, 23, 5), "Sunday 2026-03-08 23:05"),
        (
            datetime(2026, 3, 9, 7, 0, tzinfo=timezone(timedelta(hours=1))),
            "Monday 2026-03-09 07:00 UTC+01:00",
        ),
    ],
)
def test_time_section(now: datetime, expected: str) -> None:
    assert time_section(now) == f"## Now\nIt is {expected}."


def test_project_memory_lists_set_values_with_pii_masked() -> None:
    memory = {"project.customer_name": "Ana", "project.phone": "+49 1", "billing.x": 1}
    assert project_memory_section(SCHEMA, memory) == (
        "## Project memory\n- customer_name: Ana\n- phone: [set]"
    )


def test_project_memory_section_omitted_when_nothing_is_set() -> None:
    assert project_memory_section(SCHEMA, {"redirect_parcel.parcel_id": "P1"}) is None


def test_canned_reminder_quotes_every_reply() -> None:
    section = canned_reminder(("Done.", "Line one\nline two\n"))
    assert section is not None
    assert section.endswith("\n> Done.\n\n> Line one\n> line two")
    assert "Do not repeat or paraphrase" in section
    assert canned_reminder(()) is None
