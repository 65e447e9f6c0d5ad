"""Pydantic AI: an `Agent` with one plain tool, run by `agent.run`, over a `FunctionModel`.

The `FunctionModel` function is async (a plain `def` would be run in a thread for every
call) and returns the scenario's next `ModelResponse`: a `ToolCallPart` with JSON-string
arguments (as Pydantic AI's OpenAI adapter passes them on), then a `TextPart`. Each
response carries its usage, as a real provider's does: without it `FunctionModel` would
estimate tokens over the whole history on every call, work no real model adapter does.
Arguments are validated by the tool's pydantic schema, as Pydantic AI always does.
Instrumentation (Logfire / OpenTelemetry) is off, Pydantic AI's default.
"""

from __future__ import annotations

from pydantic_ai import Agent, AgentRunResult
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from scenarios import ANSWER, SYSTEM, TOOL_NAME, USER_TEXT, Outcome, Scenario, lookup_result


async def lookup(order_id: str) -> dict[str, object]:
    """Look an order up by its id.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return lookup_result(order_id)


class ScriptedFunction:
    """The `FunctionModel` function: the scenario's next reply for each request."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.position = 0

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        index = self.position
        self.position += 1
        usage = RequestUsage(input_tokens=1, output_tokens=1)
        if index == len(self.scenario.order_ids):
            return ModelResponse(parts=[TextPart(ANSWER)], usage=usage)
        order_id = self.scenario.order_ids[index]
        part = ToolCallPart(
            TOOL_NAME, f'{{"order_id": "{order_id}"}}', tool_call_id=self.scenario.call_id(index)
        )
        return ModelResponse(parts=[part], usage=usage)


class PydanticAiCase:
    """Pydantic AI running one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.function = ScriptedFunction(scenario)
        self.agent = Agent(FunctionModel(self.function), instructions=SYSTEM, tools=[lookup])

    async def prepare(self) -> None:
        self.function.position = 0

    async def run(self) -> AgentRunResult[str]:
        return await self.agent.run(USER_TEXT)

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, AgentRunResult)
        results = sum(
            1
            for message in result.all_messages()
            for part in message.parts
            if isinstance(part, ToolReturnPart) and part.tool_name == TOOL_NAME
        )
        return Outcome(answer=result.output, tool_results=results)

    async def close(self) -> None:
        pass


def make(scenario: Scenario) -> PydanticAiCase:
    """Pydantic AI, ready to run `scenario`."""
    return PydanticAiCase(scenario)
