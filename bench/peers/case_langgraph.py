"""LangGraph: the classic tool-calling graph (`MessagesState`, a model node, a `ToolNode`).

`langgraph.prebuilt.create_react_agent` is deprecated in LangGraph 1.x (moved to the
`langchain` package as `create_agent`), so the graph is built by hand the way LangGraph's
documentation shows it: START -> agent -> (tools_condition) -> tools -> agent ... -> END.
The tool is a `langchain_core` `@tool` (arguments validated by its pydantic schema); the
model is a `BaseChatModel` that replays scripted `AIMessage`s with tool calls, with
`bind_tools` binding the OpenAI-format tool list as real chat models do, and an async
`_agenerate` (the default one would hop to a thread for each call). The graph is
compiled once; each run is one `ainvoke` with a fresh state. `tools_condition` is a plain
function, so in an async graph LangGraph runs it in a thread pool after every model reply;
an `async def` router avoids that (5-20% less time in a quick check) but is not what the
documentation shows, so the documented graph is measured. No checkpointer by default;
`make(scenario, checkpointer=True)` adds LangGraph's `InMemorySaver` (a new thread per
run), the closest thing to Keel's event log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from scenarios import ANSWER, SYSTEM, TOOL_NAME, USER_TEXT, Outcome, Scenario, lookup_result


@tool
async def lookup(order_id: str) -> dict[str, object]:
    """Look an order up by its id.

    Args:
        order_id: The order id, e.g. A-1.
    """
    return lookup_result(order_id)


class ScriptedChatModel(BaseChatModel):
    """Replays the scenario: one `AIMessage` with a tool call per request, then the answer."""

    scenario: Any
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self) -> AIMessage:
        index = self.position
        self.position += 1
        if index == len(self.scenario.order_ids):
            return AIMessage(content=ANSWER)
        call = {
            "name": TOOL_NAME,
            "args": {"order_id": self.scenario.order_ids[index]},
            "id": self.scenario.call_id(index),
            "type": "tool_call",
        }
        return AIMessage(content="", tool_calls=[call])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next())])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        formatted = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=formatted, **kwargs)


def build_graph(model: ScriptedChatModel, *, checkpointer: bool = False) -> Any:
    """The compiled graph: an agent node calling the model, a ToolNode, and the loop."""
    bound = model.bind_tools([lookup])

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        reply = await bound.ainvoke([SystemMessage(SYSTEM), *state["messages"]])
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([lookup]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver() if checkpointer else None)


class LangGraphCase:
    """LangGraph running one scenario."""

    def __init__(self, scenario: Scenario, *, checkpointer: bool = False) -> None:
        self.scenario = scenario
        self.model = ScriptedChatModel(scenario=scenario)
        self.graph = build_graph(self.model, checkpointer=checkpointer)
        self.checkpointer = checkpointer
        self.runs = 0

    async def prepare(self) -> None:
        self.model.position = 0
        self.runs += 1

    async def run(self) -> dict[str, Any]:
        config = (
            {"configurable": {"thread_id": f"bench-{self.runs}"}} if self.checkpointer else None
        )
        state: dict[str, Any] = await self.graph.ainvoke(
            {"messages": [HumanMessage(USER_TEXT)]}, config
        )
        return state

    def outcome(self, result: object) -> Outcome:
        assert isinstance(result, dict)
        messages = result["messages"]
        results = sum(1 for m in messages if isinstance(m, ToolMessage) and m.name == TOOL_NAME)
        return Outcome(answer=str(messages[-1].content), tool_results=results)

    async def close(self) -> None:
        pass


def make(scenario: Scenario, *, checkpointer: bool = False) -> LangGraphCase:
    """LangGraph, ready to run `scenario` (with `InMemorySaver` when `checkpointer`)."""
    return LangGraphCase(scenario, checkpointer=checkpointer)
