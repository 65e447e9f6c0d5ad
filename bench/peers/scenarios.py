"""The two scenarios every framework runs, and what a framework's case looks like.

A scenario is one user message answered after a fixed number of tool calls, one tool call
per model reply, then a text reply:

* `support`: two lookups, then the answer (3 model round trips);
* `long`: ten lookups, then the answer (11 model round trips).

The model is scripted and answers at once, so the time measured is the framework's own:
building the request, reading the reply, validating the arguments, calling the tool,
recording the result, deciding what comes next. The tool is the same everywhere: `lookup`
takes one string, `order_id`, and returns a small dict (`lookup_result`).

Standard library only: `run.py` imports it with any Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

USER_TEXT = "Where are my orders?"
ANSWER = "All your orders have shipped."
SYSTEM = "You answer questions about orders, using the lookup tool."
TOOL_NAME = "lookup"
TOOL_DESCRIPTION = "Look an order up by its id."
ARG_DESCRIPTION = "The order id, e.g. A-1."
LOOKUP_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "description": ARG_DESCRIPTION}},
    "required": ["order_id"],
    "additionalProperties": False,
}


def lookup_result(order_id: str) -> dict[str, object]:
    """What `lookup` returns, in every framework."""
    return {"order_id": order_id, "status": "shipped", "items": 2}


@dataclass(frozen=True, kw_only=True, slots=True)
class Scenario:
    """One user message, `len(order_ids)` tool calls (one per reply), then `ANSWER`."""

    name: str
    order_ids: tuple[str, ...]

    @property
    def round_trips(self) -> int:
        """Model replies consumed: one per tool call, plus the final answer."""
        return len(self.order_ids) + 1

    def call_id(self, index: int) -> str:
        """The id of the `index`-th tool call (the same in every framework)."""
        return f"call_{index + 1}"


SCENARIOS: dict[str, Scenario] = {
    "support": Scenario(name="support", order_ids=("A-1", "A-2")),
    # Distinct arguments: Keel stops a turn that repeats an identical call three times.
    "long": Scenario(name="long", order_ids=tuple(f"A-{n}" for n in range(1, 11))),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """What a run produced, checked (outside the timed runs) against the scenario."""

    answer: str
    tool_results: int
    """Tool results the framework recorded for `lookup`."""


class Case(Protocol):
    """One framework running one scenario.

    `prepare` gives the next run a fresh script (and, for Keel, a fresh conversation) and is
    not timed; `run` handles the user message and is timed, and returns the framework's own
    result, which `outcome` reads (untimed); `close` releases what the case opened.
    """

    async def prepare(self) -> None: ...

    async def run(self) -> object: ...

    def outcome(self, result: object) -> Outcome: ...

    async def close(self) -> None: ...


def check(name: str, scenario: Scenario, outcome: Outcome) -> None:
    """Raise when a run did not do what the scenario says."""
    expected = Outcome(answer=ANSWER, tool_results=len(scenario.order_ids))
    if outcome != expected:
        raise AssertionError(f"{name}/{scenario.name}: got {outcome}, expected {expected}")
