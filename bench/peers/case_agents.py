"""OpenAI Agents SDK: an `Agent` with one `@function_tool`, run by `Runner.run`.

The model is a custom `agents.Model` whose `get_response` returns the scenario's next
reply as the SDK's own output items (a `function_call` item with JSON arguments, as the
Responses API sends them, then an assistant message), built with the SDK's helpers
`agents.testing.function_call` / `assistant_message`. The SDK's own `ScriptedModel` test
double is not used: it deep-copies every request for later inspection, work a real model
adapter does not do. Arguments are validated by the tool's strict JSON schema / pydantic
model, as the SDK always does.

Tracing: the SDK traces by default and exports to OpenAI's servers; this machine has no
network, so the main case runs with `RunConfig(tracing_disabled=True)`.
`make(scenario, tracing=True)` keeps tracing on with no exporter (spans are built, then
dropped), which is the in-process part of the default.
`max_turns=12`: the SDK's default of 10 model turns is too few for "long" (11).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    RunResult,
    ToolCallOutputItem,
    Usage,
    function_tool,
    set_trace_processors,
)
from agents.testing import assistant_message, function_call
from scenarios import ANSWER, SYSTEM, TOOL_NAME, USER_TEXT, Outcome, Scenario, lookup_result


@function_tool
async def lookup(order_id: str) -> dict[str, object]:
    """Look an order up by its id.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return lookup_result(order_id)


class ScriptedAgentsModel(Model):
    """Answers each request with the scenario's next reply."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.position = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        index = self.position
        self.position += 1
        if index == len(self.scenario.order_ids):
            item = assistant_message(ANSWER)
        else:
            order_id = self.scenario.order_ids[index]
            call_id = self.scenario.call_id(index)
            item = function_call(TOOL_NAME, f'{{"order_id": "{order_id}"}}', call_id=call_id)
        return ModelResponse(output=[item], usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the benchmark does not stream")


class AgentsCase:
    """The Agents SDK running one scenario."""

    def __init__(self, scenario: Scenario, *, tracing: bool = False) -> None:
        self.scenario = scenario
        self.model = ScriptedAgentsModel(scenario)
        self.agent = Agent(name="orders", instructions=SYSTEM, tools=[lookup], model=self.model)
        if tracing:
            set_trace_processors([])  # spans are made and dropped: nothing leaves the process
        self.config = RunConfig(tracing_disabled=not tracing)

    async def prepare(self) -> None:
        self.model.position = 0

    async def run(self) -> RunResult:
        return await Runner.run(self.agent, USER_TEXT, max_turns=12, run_config=self.config)

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, RunResult)
        results = sum(1 for item in result.new_items if isinstance(item, ToolCallOutputItem))
        return Outcome(answer=str(result.final_output), tool_results=results)

    async def close(self) -> None:
        pass


def make(scenario: Scenario, *, tracing: bool = False) -> AgentsCase:
    """The Agents SDK, ready to run `scenario` (tracing on, without an exporter, if asked)."""
    return AgentsCase(scenario, tracing=tracing)
