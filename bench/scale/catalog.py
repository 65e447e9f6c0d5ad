"""The vocabulary of the generated agent, read from `catalog.yml`.

14 business domains of a fictional operations assistant ("Northwind Desk"), each with its
skills (56 in all) and tools (91 in all). Plain data written for this benchmark;
`generate.py` decides sizes, parameters, conditions and blocks with a seeded random
generator. Nothing here is random.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

CATALOG = Path(__file__).resolve().parent / "catalog.yml"

HUB = "analytics_competitive_analysis"
"""The skill the measured turns run in: the seed trace's `cortex.competitive-analysis`,
which offered 14 tools."""

HUB_IMPORTS: tuple[str, ...] = (
    "crm_find_customer",
    "crm_get_customer",
    "crm_list_deals",
    "documents_get_document",
    "documents_summarise_text",
    "marketing_size_audience",
    "marketing_list_campaigns",
)
"""Tools of other domains the hub imports, besides its own domain's shared tools."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillIdea:
    """A skill: its id, display name, what it does, and two things a user might say."""

    skill_id: str
    domain: str
    name: str
    purpose: str
    examples: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolIdea:
    """A tool: its name (`<domain>_<stem>`) and description."""

    name: str
    domain: str
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Domain:
    """A business area: the noun of its records, a categorical entry, skills and tools."""

    name: str
    record: str
    choice: str
    """Name of the categorical entry its skills collect."""
    values: tuple[str, ...]
    skills: tuple[SkillIdea, ...]
    tools: tuple[ToolIdea, ...]


@cache
def domains() -> tuple[Domain, ...]:
    """Every domain of `catalog.yml`, in file order."""
    data = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
    return tuple(_domain(item) for item in data["domains"])


def _domain(item: dict[str, object]) -> Domain:
    name = str(item["name"])
    choice = [str(v) for v in item["choice"]]  # type: ignore[attr-defined]
    skills = tuple(
        SkillIdea(
            skill_id=f"{name}_{row[0]}",
            domain=name,
            name=row[1],
            purpose=row[2],
            examples=tuple(row[3:]),
        )
        for row in item["skills"]  # type: ignore[attr-defined]
    )
    tools = tuple(
        ToolIdea(name=f"{name}_{stem}", domain=name, text=text)
        for stem, text in item["tools"]  # type: ignore[attr-defined]
    )
    return Domain(
        name=name,
        record=str(item["record"]),
        choice=choice[0],
        values=tuple(choice[1:]),
        skills=skills,
        tools=tools,
    )
