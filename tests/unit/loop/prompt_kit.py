"""Builders shared by the prompt tests: a small parcel skill, its memory and inputs."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from keel.loop.prompt import PromptInputs, Routing, Situation
from keel.memory import MemoryField, MemorySchema
from keel.project.config import AgentConfig
from keel.skills import SkillDocument, parse_skill

NOW = datetime(2026, 1, 1, 9, 30, tzinfo=UTC)
CONFIG = AgentConfig(persona="You are Parcelo, a parcel assistant.", rules=("Be kind.",))
ALL_FRAMEWORK_TOOLS = frozenset(
    {
        "activate",
        "set_fields",
        "complete_skill",
        "cancel_skill",
        "listen",
        "search_knowledge",
        "cannot_help",
        "resolve_tool_confirmation",
    }
)

PARCEL_TEXT = """\
---
name: Redirect Parcel
description: >
  Change where a parcel is delivered.
---
Help the user redirect parcel @memory.redirect_parcel.parcel_id with @tool.reroute.

if: session.redirect_parcel.is_international
Mention the customs fee.

Begin with @block.main.

:::ordered_block id=main
steps:
  - id: ask_id
    collect: parcel_id
    utterance: utter_ask_parcel_id
  - id: pick
    instructions: Read back @memory.redirect_parcel.parcel_id and ask where to send it.
:::
"""


def skill(text: str, skill_id: str = "redirect_parcel") -> SkillDocument:
    """Parse a skill.md (dedented); fails the test on any diagnostic."""
    document, diagnostics = parse_skill(
        skill_id, textwrap.dedent(text).lstrip("\n"), f"skills/{skill_id}/skill.md"
    )
    assert diagnostics == [], diagnostics
    assert document is not None
    return document


def field(namespace: str, name: str, **attributes: Any) -> MemoryField:
    """A memory field; visibility follows the namespace unless given."""
    attributes.setdefault("type", "text")
    default = "project" if namespace == "project" else "public"
    attributes.setdefault("visibility", default)
    return MemoryField(namespace=namespace, name=name, **attributes)


PARCEL = skill(PARCEL_TEXT)
BILLING = skill(
    """
    ---
    name: Billing
    description: Questions about invoices and payments.
    ---
    Help with the invoice.
    """,
    "billing",
)
SCHEMA = MemorySchema.of(
    [
        field("project", "customer_name"),
        field("project", "phone", pii=True),
        field("redirect_parcel", "parcel_id", description="Tracking number"),
        field("redirect_parcel", "is_international", type="bool", visibility="private"),
        field("billing", "invoice_total", type="int"),
        field("billing", "card_last4", visibility="private"),
    ]
)


def inputs(
    situation: Situation | None = None,
    *,
    memory: Mapping[str, object] | None = None,
    **overrides: Any,
) -> PromptInputs:
    """PromptInputs for the parcel agent; routing with both skills unless told otherwise."""
    overrides.setdefault("config", CONFIG)
    overrides.setdefault("now", NOW)
    overrides.setdefault("skills", (PARCEL, BILLING))
    overrides.setdefault("schema", SCHEMA)
    return PromptInputs(
        situation=situation or Routing(eligible=(PARCEL, BILLING)),
        memory=memory or {},
        **overrides,
    )
