"""The floor: a hand-written tool-calling loop with nothing in it but the loop.

Plain dicts for messages, a dict from tool name to function, a JSON schema per tool
compiled once with fastjsonschema, results encoded with `json.dumps`. No framework does
less and still validates arguments, so every other case is compared with this one.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import fastjsonschema
from scenarios import (
    ANSWER,
    LOOKUP_SCHEMA,
    SYSTEM,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    USER_TEXT,
    Outcome,
    Scenario,
    lookup_result,
)

Message = dict[str, Any]


async def lookup(order_id: str) -> dict[str, object]:
    """The benchmark's tool."""
    return lookup_result(order_id)


class ScriptedReplies:
    """Answers each request with the next scripted reply, built as a provider adapter would."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.position = 0

    async def __call__(self, messages: list[Message], tools: list[Message]) -> Message:
        index = self.position
        self.position += 1
        if index == len(self.scenario.order_ids):
            return {"role": "assistant", "content": ANSWER}
        call = {
            "id": self.scenario.call_id(index),
            "name": TOOL_NAME,
            "arguments": {"order_id": self.scenario.order_ids[index]},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}


class FloorCase:
    """The floor running one scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.tools: dict[str, Callable[..., Awaitable[dict[str, object]]]] = {TOOL_NAME: lookup}
        self.validators = {TOOL_NAME: fastjsonschema.compile(LOOKUP_SCHEMA)}
        self.schemas = [
            {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": LOOKUP_SCHEMA}
        ]
        self.model = ScriptedReplies(scenario)

    async def prepare(self) -> None:
        self.model = ScriptedReplies(self.scenario)

    async def run(self) -> list[Message]:
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": USER_TEXT},
        ]
        while True:
            reply = await self.model(messages, self.schemas)
            messages.append(reply)
            calls = reply.get("tool_calls")
            if not calls:
                break
            for call in calls:
                messages.append(await self._call(call))
        return messages

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, list)
        results = sum(1 for m in result if m["role"] == "tool")
        return Outcome(answer=result[-1]["content"], tool_results=results)

    async def close(self) -> None:
        pass

    async def _call(self, call: Message) -> Message:
        name, arguments = call["name"], call["arguments"]
        try:
            self.validators[name](arguments)
            content = json.dumps(await self.tools[name](**arguments))
        except (KeyError, fastjsonschema.JsonSchemaException) as exc:
            content = json.dumps({"error": str(exc)})
        return {"role": "tool", "tool_call_id": call["id"], "content": content}


def make(scenario: Scenario) -> FloorCase:
    """The floor, ready to run `scenario`."""
    return FloorCase(scenario)
