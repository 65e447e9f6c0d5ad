"""Write-once project memory written again (spec §3.3) and refused `set_memory` steps, on
the `tests/compat_runtime/agents/bank` project."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from keel.events.model import ToolCallRefused
from keel.loop.memory_ops import PlannedWrite, Refusal, plan_write, write_events
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.harness import load_definition

AGENT = Path(__file__).parents[2] / "compat_runtime" / "agents" / "bank"


def _plan(memory: dict[str, object], raw: object, writer: str = "tool") -> object:
    schema = load_definition(AGENT).memory
    return plan_write(schema, memory, "project.customer_tier", raw, writer, "tiering")  # type: ignore[arg-type]


@pytest.mark.parametrize("writer", ["tool", "block", "button"])
def test_the_value_a_write_once_field_holds_is_accepted_as_no_change(writer: str) -> None:
    planned = _plan({"project.customer_tier": "silver"}, "silver", writer)
    assert planned == PlannedWrite(key="project.customer_tier", value="silver", unchanged=True)
    assert isinstance(planned, PlannedWrite)
    assert write_events(planned, filled_by="set_tier") == ()


def test_another_value_is_still_refused() -> None:
    planned = _plan({"project.customer_tier": "silver"}, "gold")
    assert isinstance(planned, Refusal)
    assert planned.code == "memory.write.write_once"


def test_clearing_a_set_write_once_field_is_still_refused() -> None:
    planned = _plan({"project.customer_tier": "silver"}, None)
    assert isinstance(planned, Refusal)


def test_the_first_write_is_an_ordinary_change() -> None:
    planned = _plan({}, "silver")
    assert planned == PlannedWrite(key="project.customer_tier", value="silver")


async def test_a_refused_set_memory_step_is_logged_for_the_operator(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = ScriptedModel(
        [{"tool_calls": [{"name": "activate", "arguments": {"target_id": "tiering"}}]}]
    )
    harness = ConversationHarness(AGENT, script)
    with caplog.at_level(logging.WARNING, logger="keel.loop"):
        result = await harness.send("my tier")
    refused = [e for e in result.events if isinstance(e, ToolCallRefused)]
    assert [(e.tool_name, e.code) for e in refused] == [("set_memory", "memory.write.write_once")]
    lines = [r for r in caplog.records if r.name == "keel.loop" and "set_memory" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "customer_tier" in lines[0].getMessage()
    assert getattr(lines[0], "conversation_id", None) == harness.conversation_id
