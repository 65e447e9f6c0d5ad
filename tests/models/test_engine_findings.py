"""Engine behaviour the models acceptance tests first found wrong (issue 4), now fixed:
a router-tier skill's own switch is a `model` decision, a routing call that chooses no
skill is recorded as `none`, and a dated model id keeps the configured model's price.
"""

from __future__ import annotations

from pathlib import Path

from tiered_harness import make_tiered_harness
from wire_harness import single_model_factory, tiered_factory

from keel.events.model import ModelCalled, RoutingDecided
from keel.llm.port import Usage
from keel.testing import ScriptedModel
from keel.testing.openai_wire_server import OpenAIWireServer

TIERS_AGENT = Path(__file__).resolve().parent / "agents" / "tiers"


def _routing(events: object) -> list[tuple[str, str | None, str | None]]:
    assert isinstance(events, tuple)
    return [(e.source, e.skill_id, e.tier) for e in events if isinstance(e, RoutingDecided)]


async def test_a_router_tier_skill_switching_skills_is_not_a_router_decision() -> None:
    script = ScriptedModel(
        [
            {"tool_calls": [{"name": "activate", "arguments": {"target_id": "lookup"}}]},
            "What is the order number?",
            {"tool_calls": [{"name": "activate", "arguments": {"target_id": "planner"}}]},
            "What did you enjoy reading last?",
        ]
    )
    harness = make_tiered_harness(TIERS_AGENT, script)
    await harness.send("where is my order?")
    await harness.send("actually, plan my reading instead")

    assert [r.tier for r in script.requests] == ["router", "router", "router", "reasoning"]
    assert _routing(harness.events) == [
        ("router", "lookup", "router"),
        ("sticky", "lookup", None),
        ("model", "planner", "router"),
    ]


async def test_a_routing_call_that_chooses_no_skill_is_recorded() -> None:
    script = ScriptedModel(["Hello! How can I help?"])
    harness = make_tiered_harness(TIERS_AGENT, script)
    await harness.send("hello")

    assert [r.tier for r in script.requests] == ["router"]
    assert _routing(harness.events) == [("none", None, "router")]


async def test_a_dated_model_id_from_the_provider_keeps_the_configured_price() -> None:
    usage = Usage(input_tokens=2000, output_tokens=500)
    with OpenAIWireServer(served_model=lambda model: f"{model}-2025-04-14", usage=usage) as server:
        factory = tiered_factory(server, stream=False, observers=[])
        script = ScriptedModel(
            [{"tool_calls": [{"name": "activate", "arguments": {"target_id": "faq"}}]}, "Yes."]
        )
        harness = factory(TIERS_AGENT, script)
        try:
            await harness.send("do you sell maps?")
        finally:
            await harness.aclose()

    calls = [e for e in harness.events if isinstance(e, ModelCalled)]
    assert [c.model for c in calls] == ["fast-1-2025-04-14", "main-1-2025-04-14"]
    assert [c.cost for c in calls] == [0.003, 0.008]


async def test_the_served_model_id_is_what_model_called_names() -> None:
    """The part of the finding above that holds: the served id reaches the event."""
    with OpenAIWireServer(served_model=lambda model: f"{model}-2025-04-14") as server:
        factory = single_model_factory(server, model="main-1", stream=False, observers=[])
        script = ScriptedModel(["Hello."])
        harness = factory(TIERS_AGENT, script)
        try:
            await harness.send("hi")
        finally:
            await harness.aclose()
    calls = [e for e in harness.events if isinstance(e, ModelCalled)]
    assert [(c.model, c.tier) for c in calls] == [("main-1-2025-04-14", "router")]
