"""The shape of the generated agent, decided by a seeded random generator (pure, no IO).

`plan_project(seed)` returns every skill and tool with its parameters, memory, conditions
and kind; `render.py` and `render_tools.py` turn the plan into files. The same seed always
gives the same project.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from catalog import HUB, HUB_IMPORTS, Domain, SkillIdea, domains

SESSION_TOOL = "account_load_profile"
WRITE_VERBS = ("create", "update", "cancel", "issue", "close", "erase", "switch", "set", "merge")
OPTIONAL_PARAMS = ("limit", "include_closed", "channel", "note", "period")


@dataclass(frozen=True, kw_only=True, slots=True)
class Param:
    """One tool parameter: name, Python annotation, default (None: required), description."""

    name: str
    annotation: str
    default: str | None
    doc: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolPlan:
    """One of the 91 tools: where it is defined and what it takes."""

    name: str
    domain: str
    text: str
    params: tuple[Param, ...]
    owner: str | None
    """The skill whose `tools.py` defines it; None for a shared tool in `tools/`."""

    @property
    def writes(self) -> bool:
        """A tool that changes something (asks for confirmation when gated)."""
        stem = self.name.removeprefix(f"{self.domain}_")
        return stem.startswith(WRITE_VERBS)

    @property
    def required(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.default is None)


@dataclass(frozen=True, kw_only=True, slots=True)
class Constraint:
    """A `tool_constraints` entry."""

    tool: str
    requires: str
    confirm: bool
    on_success: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillPlan:
    """One routable skill."""

    idea: SkillIdea
    record: str
    choice: str
    values: tuple[str, ...]
    kind: str
    """`prose`, `mixed` (prose entering a block) or `blocks` (one block, no prose)."""
    tools: tuple[str, ...]
    """Every tool the skill has: its own first, then imported ones."""
    imports: tuple[str, ...]
    requires: str | None
    tier: str | None
    max_turns: int
    complete: str
    """`condition`, `criteria` or `none`."""
    constraints: tuple[Constraint, ...]
    intro: bool
    extra_entries: tuple[str, ...]
    """Optional entries beyond reference, choice and done: `amount`, `note`, `last_result`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ProjectPlan:
    """The whole generated agent."""

    seed: int
    skills: tuple[SkillPlan, ...]
    tools: tuple[ToolPlan, ...]
    reasoning_skills: tuple[str, ...]

    def tool(self, name: str) -> ToolPlan:
        return next(t for t in self.tools if t.name == name)


def _params(rng: random.Random, record: str) -> tuple[Param, ...]:
    params: list[Param] = []
    if rng.random() < 0.75:
        doc = f"The {record} reference as the user gave it."
        params.append(Param(name="reference", annotation="str", default=None, doc=doc))
    elif rng.random() < 0.5:
        doc = "What to look for, in the user's words."
        params.append(Param(name="query", annotation="str", default=None, doc=doc))
    pool = {
        "limit": Param(name="limit", annotation="int", default="10", doc="How many at most."),
        "include_closed": Param(
            name="include_closed", annotation="bool", default="False", doc="Also closed ones."
        ),
        "channel": Param(
            name="channel",
            annotation='Literal["email", "sms", "phone"]',
            default='"email"',
            doc="Where to send the confirmation.",
        ),
        "note": Param(
            name="note", annotation="str | None", default="None", doc="A short note to keep."
        ),
        "period": Param(
            name="period",
            annotation='Literal["week", "month", "quarter"]',
            default='"month"',
            doc="The period to cover.",
        ),
    }
    for name in rng.sample(OPTIONAL_PARAMS, rng.randint(0, 2)):
        params.append(pool[name])
    return tuple(params)


def _tools(rng: random.Random, all_domains: tuple[Domain, ...]) -> list[ToolPlan]:
    tools: list[ToolPlan] = []
    for domain in all_domains:
        ownable = [
            t.name
            for t in domain.tools
            if t.name not in HUB_IMPORTS and t.name != SESSION_TOOL and domain.name != "analytics"
        ]
        owned = set(rng.sample(ownable, rng.randint(1, 2))) if ownable else set()
        owners = {name: rng.choice(domain.skills).skill_id for name in sorted(owned)}
        if domain.name == "analytics":
            owners = {"analytics_web_search": HUB, "analytics_comparison_table": HUB}
        for idea in domain.tools:
            params = _params(rng, domain.record)
            if idea.name == SESSION_TOOL:
                doc = "Account id the channel sent with the session."
                params = (Param(name="customer_id", annotation="str", default=None, doc=doc),)
            tools.append(
                ToolPlan(
                    name=idea.name,
                    domain=domain.name,
                    text=idea.text,
                    params=params,
                    owner=owners.get(idea.name),
                )
            )
    return tools


def _imports(rng: random.Random, idea: SkillIdea, shared: list[ToolPlan]) -> list[str]:
    if idea.skill_id == HUB:
        own = [t.name for t in shared if t.domain == "analytics"]
        return own + list(HUB_IMPORTS)
    mine = [t.name for t in shared if t.domain == idea.domain and t.name != SESSION_TOOL]
    chosen = rng.sample(mine, min(len(mine), rng.randint(2, 5)))
    if rng.random() < 0.4:
        others = [t.name for t in shared if t.domain != idea.domain and t.name != SESSION_TOOL]
        chosen.append(rng.choice(others))
    return chosen


def _cover(rng: random.Random, imports: dict[str, list[str]], shared: list[ToolPlan]) -> None:
    """Every shared tool is imported by at least one skill of its domain."""
    used = {name for names in imports.values() for name in names}
    for tool in shared:
        if tool.name in used or tool.name == SESSION_TOOL:
            continue
        takers = sorted(s for s in imports if s.startswith(f"{tool.domain}_") and s != HUB)
        imports[rng.choice(takers)].append(tool.name)


def _requires(rng: random.Random, idea: SkillIdea) -> str | None:
    if idea.skill_id == "account_verify_identity":
        return None
    roll = rng.random()
    if roll < 0.6:
        return "session.project.authenticated == True"
    if roll < 0.7:
        return "session.project.account_tier == 'enterprise'"
    if roll < 0.8:
        return "session.project.authenticated == True and session.project.account_tier != 'free'"
    return None


def _constraints(
    rng: random.Random, skill_id: str, tools: list[ToolPlan], hub: bool
) -> tuple[Constraint, ...]:
    gated = tools if hub else rng.sample(tools, min(len(tools), rng.randint(1, 3)))
    out = []
    for tool in gated:
        if hub:
            requires = f"session.{skill_id}.period != None"
        elif any(p.name == "reference" for p in tool.params):
            requires = f"session.{skill_id}.reference != None"
        else:
            requires = f"session.{skill_id}.done != True"
        if rng.random() < 0.3:
            requires += " and session.project.authenticated == True"
        confirm = tool.writes and not hub
        out.append(
            Constraint(
                tool=tool.name, requires=requires, confirm=confirm, on_success=rng.random() < 0.4
            )
        )
    return tuple(out)


def _skill(
    rng: random.Random,
    idea: SkillIdea,
    domain: Domain,
    kind: str,
    plan_tools: list[ToolPlan],
    imports: list[str],
) -> SkillPlan:
    hub = idea.skill_id == HUB
    own = [t.name for t in plan_tools if t.owner == idea.skill_id]
    names = own + [n for n in imports if n not in own]
    by_name = {t.name: t for t in plan_tools}
    tier = None
    if hub or (idea.domain == "analytics" and rng.random() < 0.5):
        tier = "reasoning" if not hub else "default"
    elif rng.random() < 0.15:
        tier = rng.choice(("default", "reasoning"))
    complete = "none" if kind == "blocks" else rng.choice(("condition", "condition", "criteria"))
    extra = [e for e in ("amount", "note") if rng.random() < 0.35]
    if own:
        extra.append("last_result")
    return SkillPlan(
        idea=idea,
        record=domain.record,
        choice="period" if hub else domain.choice,
        values=("week", "month", "quarter") if hub else domain.values,
        kind=kind,
        tools=tuple(names),
        imports=tuple(imports),
        requires="session.project.authenticated == True" if hub else _requires(rng, idea),
        tier=tier,
        max_turns=6 if hub else rng.randint(3, 16),
        complete="condition" if hub else complete,
        constraints=_constraints(rng, idea.skill_id, [by_name[n] for n in names], hub)
        if not hub
        else _constraints(rng, idea.skill_id, [by_name[n] for n in names[:4]], hub),
        intro=rng.random() < 0.3,
        extra_entries=tuple(extra),
    )


def plan_project(seed: int) -> ProjectPlan:
    """The generated agent for `seed`: 56 routable skills over 91 tools."""
    rng = random.Random(seed)
    all_domains = domains()
    tools = _tools(rng, all_domains)
    shared = [t for t in tools if t.owner is None]
    ideas = [s for d in all_domains for s in d.skills]
    others = [s.skill_id for s in ideas if s.skill_id != HUB]
    shuffled = rng.sample(others, len(others))
    kinds = {sid: "blocks" for sid in shuffled[:10]} | {sid: "mixed" for sid in shuffled[10:24]}
    imports = {s.skill_id: _imports(rng, s, shared) for s in ideas}
    _cover(rng, imports, shared)
    by_domain = {d.name: d for d in all_domains}
    skills = tuple(
        _skill(
            rng, s, by_domain[s.domain], kinds.get(s.skill_id, "prose"), tools, imports[s.skill_id]
        )
        for s in ideas
    )
    reasoning = tuple(sorted(rng.sample(others, 2)))
    return ProjectPlan(seed=seed, skills=skills, tools=tuple(tools), reasoning_skills=reasoning)
