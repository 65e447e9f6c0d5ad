"""A realistic conversation history, recorded once through Keel's engine and then copied.

The history is a session start and about 30 turns: visits to several skills (route, record
fields, call tools, complete), then the skill the measured turns run in, left active. It is
recorded with `PolicyModel` on an in-memory store; `routing_end` marks the longest prefix
that ends with no skill active (where the routing scenarios start).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from plan import ProjectPlan, SkillPlan
from policy import PolicyModel, TurnPlan

from keel.events.fold import fold
from keel.events.model import Event
from keel.ids import Clock, SequentialIds
from keel.loop.control import SESSION_START
from keel.loop.engine import Engine
from keel.project.definition import AgentDefinition
from keel.stores.memory import InMemoryEventStore

VISITS = 9
"""Skills visited (three turns each) before the measured skill is entered."""

REPLY = (
    "I have checked that for you. {detail} The figures come straight from our records, so "
    "they should match what you see in the portal. If anything looks off, tell me which "
    "line and I will look at it again before we change anything."
)
DETAILS = (
    "Everything is in order and nothing is pending on your side.",
    "There is one open item from last month that is still being processed.",
    "The last change went through on the first of the month and is confirmed.",
    "Two of the three entries match; the third is waiting for a colleague's review.",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Template:
    """A recorded log, and where its routing prefix ends."""

    events: tuple[Event, ...]
    routing_end: int
    """Events in the longest prefix ending at a turn boundary with no skill active."""
    turns: int
    routing_turns: int
    active_skill: str


def _reply(rng: random.Random) -> str:
    return REPLY.format(detail=rng.choice(DETAILS))


def _open_tools(skill: SkillPlan) -> list[str]:
    confirmed = {c.tool for c in skill.constraints if c.confirm}
    return [t for t in skill.tools if t not in confirmed]


def _visit(skill: SkillPlan, number: int, rng: random.Random) -> list[TurnPlan]:
    sid, tools = skill.idea.skill_id, _open_tools(skill)
    reference = f"NW-{skill.record[:3]}-{1000 + number}"
    last = TurnPlan(text="Thanks, that is everything for this one.", reply="Glad to help.")
    if skill.complete == "condition":
        last = TurnPlan(text=last.text, reply=last.reply, fields={"done": True})
    elif skill.complete == "criteria":
        last = TurnPlan(text=last.text, reply=last.reply, complete=True)
    return [
        TurnPlan(
            text=f"Hi, {skill.idea.examples[0]}. The reference is {reference}.",
            reply=_reply(rng),
            route=sid,
            fields={"reference": reference},
            tools=tuple(tools[:1]),
        ),
        TurnPlan(
            text=f"Also, {skill.idea.examples[1]}; make it {skill.values[-1]} please.",
            reply=_reply(rng),
            fields={skill.choice: skill.values[-1]},
            tools=tuple(tools[1:2]),
        ),
        last,
    ]


def scale_plans(plan: ProjectPlan, hub: str) -> list[TurnPlan]:
    """Nine skill visits, then two turns in `hub` (left active)."""
    rng = random.Random(plan.seed)
    eligible = [
        s
        for s in plan.skills
        if s.kind == "prose" and s.idea.skill_id != hub and "enterprise'" not in (s.requires or "")
    ]
    turns: list[TurnPlan] = []
    for number, skill in enumerate(rng.sample(eligible, VISITS)):
        turns += _visit(skill, number, rng)
    center = next(s for s in plan.skills if s.idea.skill_id == hub)
    return [
        *turns,
        TurnPlan(
            text=f"Now {center.idea.examples[1]}? Look at the last quarter.",
            reply=_reply(rng),
            route=hub,
            fields={"period": "quarter", "reference": "NW-rep-2041"},
            tools=("analytics_web_search",),
        ),
        TurnPlan(
            text="Put that in a comparison table.",
            reply=_reply(rng),
            tools=("analytics_comparison_table",),
        ),
    ]


def support_plans() -> list[TurnPlan]:
    """examples/support: verify, then billing and outage visits, ending in billing."""
    rng = random.Random(4)
    verify = [
        TurnPlan(text="Hi, can you verify me?", reply="Sure.", route="verify_customer"),
        TurnPlan(text="BW100234", reply="Thanks.", fields={"account_number": "BW100234"}),
        TurnPlan(text="4821", reply="Thanks.", fields={"pin": "4821"}),
    ]
    billing = [
        TurnPlan(
            text="Why is my bill higher than usual this month?",
            reply=_reply(rng),
            route="billing_question",
            tools=("get_account_summary", "get_latest_invoice"),
        ),
        TurnPlan(
            text="Is that the late fee?", reply=_reply(rng), fields={"question_topic": "late_fee"}
        ),
        TurnPlan(
            text="OK, that answers it, thanks.",
            reply="Glad to help.",
            fields={"question_resolved": True},
        ),
    ]
    outage = [
        TurnPlan(
            text="Also my internet keeps dropping.", reply="Sorry to hear.", route="report_outage"
        ),
        TurnPlan(text="LN4 7QP", reply=_reply(rng), fields={"postcode": "LN4 7QP"}),
    ]
    return verify + (billing + outage) * 5 + billing[:2]


async def record(
    definition: AgentDefinition,
    plans: Sequence[TurnPlan],
    clock: Clock,
    metadata: dict[str, object],
) -> Template:
    """Run `plans` through the engine after a session start; the log and its routing prefix."""
    store = InMemoryEventStore(clock=clock)
    model = PolicyModel()
    engine = Engine(
        definition=definition, store=store, model=model, clock=clock, ids=SequentialIds("h-")
    )
    await engine.handle("template", SESSION_START, metadata=metadata)  # type: ignore[arg-type]
    ends: list[tuple[int, bool]] = []
    for turn in plans:
        model.plan = turn
        result = await engine.handle("template", turn.text)
        if result.stop_reason == "error":
            raise RuntimeError(f"recording failed at {turn.text!r}: {result.events[-4:]}")
        quiet = result.state.active_skill_id is None and result.state.status == "idle"
        ends.append((result.state.last_seq, quiet))
    events = tuple(s.event for s in await store.read("template"))
    state = fold(events)
    if state.active_skill_id is None:
        raise RuntimeError("the recorded history ends with no skill active")
    routing = [i for i, (_, quiet) in enumerate(ends) if quiet]
    if not routing:
        raise RuntimeError("the recorded history never has a moment with no skill active")
    return Template(
        events=events,
        routing_end=ends[routing[-1]][0],
        turns=len(plans),
        routing_turns=routing[-1] + 1,
        active_skill=state.active_skill_id,
    )
