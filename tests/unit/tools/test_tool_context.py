"""ToolContext, LocalToolContext, ToolResult and calling tools and hooks."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from keel.errors import RunError, ToolError
from keel.tools import (
    HookDefinition,
    LocalMemory,
    LocalToolContext,
    MemoryAccess,
    ToolContext,
    ToolResult,
    current_tool_context,
    invoke_hook,
    invoke_tool,
    tool,
    tool_definition,
    use_tool_context,
)


def test_local_context_defaults() -> None:
    context = LocalToolContext()
    assert isinstance(context, ToolContext)
    assert isinstance(context.memory, MemoryAccess)
    assert context.is_cancelled is False
    assert (context.sender_id, context.conversation_id) == ("", "")
    assert context.memory.get("anything") is None


def test_cancellation_is_polled() -> None:
    flag = {"cancelled": False}
    context = LocalToolContext(cancelled=lambda: flag["cancelled"])
    assert not context.is_cancelled
    flag["cancelled"] = True
    assert context.is_cancelled


async def test_send_records_even_without_await() -> None:
    heard: list[str] = []
    context = LocalToolContext(on_send=heard.append)
    pending = context.send("first")
    assert context.sent == ["first"] and heard == ["first"]
    await pending
    await context.send("second")
    assert heard == ["first", "second"]


async def test_send_awaits_an_async_sink() -> None:
    heard: list[str] = []

    async def sink(text: str) -> None:
        heard.append(text)

    context = LocalToolContext(on_send=sink)
    await context.send("hello")
    assert heard == ["hello"]


def test_local_memory_set_get_clear_and_rejection() -> None:
    def reject_negative(key: str, value: Any) -> None:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"{key} must be positive")

    memory = LocalMemory({"project.x": 1}, on_set=reject_negative)
    memory.set("count", 2)
    with pytest.raises(ValueError):
        memory.set("count", -1)
    assert memory.get("count") == 2
    memory.clear("count")
    memory.clear("never_set")
    assert memory.values == {"project.x": 1}


def test_current_context_only_inside_a_call() -> None:
    with pytest.raises(RunError):
        current_tool_context()
    context = LocalToolContext(sender_id="u1")
    with use_tool_context(context):
        assert current_tool_context() is context
    with pytest.raises(RunError):
        current_tool_context()


def test_tool_result_shape() -> None:
    result = ToolResult(llm_response={"ok": True}, next=[1, 2])  # type: ignore[arg-type]
    assert result.next == (1, 2)
    assert not result.is_error
    assert ToolResult(error="no such parcel").is_error
    assert ToolResult() == ToolResult(llm_response=None, next=(), error=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.error = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ToolResult({"ok": True})  # type: ignore[call-arg]


@tool(description="Echo with the sender.")
async def echo(text: str, context: ToolContext | None = None) -> ToolResult:
    assert context is current_tool_context()
    return ToolResult(llm_response=f"{text}:{context.sender_id}")


@tool(description="No context parameter.")
async def plain(text: str) -> ToolResult:
    return ToolResult(llm_response=text)


async def test_invoke_tool_injects_context() -> None:
    definition = tool_definition(echo)
    assert definition is not None
    result = await invoke_tool(definition, {"text": "hi"}, LocalToolContext(sender_id="u9"))
    assert result == ToolResult(llm_response="hi:u9")
    with pytest.raises(ToolError):
        await invoke_tool(definition, {"text": "hi", "context": None}, LocalToolContext())


async def test_invoke_tool_without_context_parameter() -> None:
    definition = tool_definition(plain)
    assert definition is not None
    assert await invoke_tool(definition, {"text": "x"}, LocalToolContext()) == ToolResult(
        llm_response="x"
    )


def _hook(func: Any, *, is_async: bool, context_param: str | None) -> HookDefinition:
    return HookDefinition(
        entry="email",
        name="run_after_setting_email",
        func=func,
        is_async=is_async,
        context_param=context_param,
        module_file="skills/s/tools.py",
        line=1,
    )


async def test_invoke_hook_sync_and_async() -> None:
    def sync_hook(context: ToolContext) -> ToolResult:
        return ToolResult(error=None if context.memory.get("email") else "missing")

    async def async_hook() -> ToolResult:
        return ToolResult(llm_response="ran")

    context = LocalToolContext()
    first = await invoke_hook(_hook(sync_hook, is_async=False, context_param="context"), context)
    assert first == ToolResult(error="missing")
    second = await invoke_hook(_hook(async_hook, is_async=True, context_param=None), context)
    assert second == ToolResult(llm_response="ran")
