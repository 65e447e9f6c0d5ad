"""Running tools and post-write hooks: outcomes, timeouts, cancellation, result text."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import pytest

from keel.errors import ToolError
from keel.tools import (
    HookDefinition,
    HookRun,
    InvalidMemoryValue,
    LocalToolContext,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolRun,
    coerce_arguments,
    current_tool_context,
    run_hook,
    run_tool,
    to_result_text,
    tool,
    tool_definition,
)

LONG = 60.0  # a deadline no test reaches


def definition_of(func: Callable[..., Any]) -> ToolDefinition:
    definition = tool_definition(func)
    assert definition is not None
    return definition


def returning(value: object) -> ToolDefinition:
    @tool(description="Return a fixed value.")
    async def fixed() -> object:
        return value

    return definition_of(fixed)


def raising(error: BaseException) -> ToolDefinition:
    @tool(description="Raise.")
    async def failing() -> None:
        raise error

    return definition_of(failing)


async def test_success_with_a_tool_result() -> None:
    definition = returning(ToolResult(llm_response={"status": "shipped", "id": 7}))
    run = await run_tool(definition, {}, context=None, timeout=LONG)
    assert run == ToolRun(
        outcome="success",
        result_text='{"id":7,"status":"shipped"}',
        llm_response={"status": "shipped", "id": 7},
        error_message=None,
    )
    assert not run.is_error


@pytest.mark.parametrize(
    ("llm_response", "text"),
    [("plain words", "plain words"), (None, ""), ([1, "é"], '[1,"é"]'), (3.5, "3.5")],
)
async def test_result_text(llm_response: object, text: str) -> None:
    run = await run_tool(
        returning(ToolResult(llm_response=llm_response)), {}, context=None, timeout=LONG
    )
    assert (run.outcome, run.result_text) == ("success", text)


async def test_a_bare_return_value_is_the_llm_response() -> None:
    run = await run_tool(returning({"ok": True, "b": 1}), {}, context=None, timeout=LONG)
    assert run == ToolRun(
        outcome="success",
        result_text='{"b":1,"ok":true}',
        llm_response={"ok": True, "b": 1},
        error_message=None,
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"ok": False, "error": "insufficient_funds", "b": 1}, "insufficient_funds"),
        ({"ok": False, "b": 1}, "tool 'fixed' reported failure (ok: false)"),
        ({"success": False, "message": "biller offline"}, "biller offline"),
        ({"success": False, "reason": "closed"}, "closed"),
        ({"error": "payee blocked"}, "payee blocked"),
        ({"error": {"code": 4}}, '{"code":4}'),
        (MappingProxyType({"ok": False}), "tool 'fixed' reported failure (ok: false)"),
        (ToolResult(llm_response={"ok": False, "reason": "limit"}), "limit"),
    ],
)
async def test_a_failure_payload_fails_the_run(value: object, message: str) -> None:
    run = await run_tool(returning(value), {}, context=None, timeout=LONG)
    payload = value.llm_response if isinstance(value, ToolResult) else value
    # The model reads the payload itself; the run is an error with the payload's words.
    assert run == ToolRun(
        outcome="error",
        result_text=to_result_text(payload),
        llm_response=payload,
        error_message=message,
        error_code="tool.error_result",
    )


@pytest.mark.parametrize(
    "value",
    [
        {"ok": True, "error": "ignored"},
        {"success": True, "error": "ignored"},
        {"error": None},
        {"error": ""},
        {"error": False},
        {"error": []},
        {"ok": 0},
        {"ok": "false"},
        {"status": "failed"},
        [{"ok": False}],
        "ok: false",
    ],
)
async def test_what_is_not_a_failure_payload(value: object) -> None:
    run = await run_tool(returning(value), {}, context=None, timeout=LONG)
    assert (run.outcome, run.error_code) == ("success", None)


async def test_a_tool_result_error_fails_the_run() -> None:
    run = await run_tool(returning(ToolResult(error="no such order")), {}, context=None, timeout=1)
    assert run == ToolRun(
        outcome="error",
        result_text="Error: no such order",
        llm_response=None,
        error_message="no such order",
        error_code="tool.error_result",
    )
    assert run.is_error


async def test_a_failing_tool_result_keeps_its_llm_response_for_the_model() -> None:
    result = ToolResult(llm_response={"reason": "closed"}, error="lookup failed")
    run = await run_tool(returning(result), {}, context=None, timeout=LONG)
    assert (run.outcome, run.error_message) == ("error", "lookup failed")
    assert (run.result_text, run.llm_response) == ('{"reason":"closed"}', {"reason": "closed"})


async def test_an_exception_is_an_error_without_traceback() -> None:
    run = await run_tool(raising(ValueError("bad order id")), {}, context=None, timeout=LONG)
    assert run == ToolRun(
        outcome="error",
        result_text="Error: ValueError: bad order id",
        llm_response=None,
        error_message="ValueError: bad order id",
        error_code="tool.raised",
    )


async def test_a_raised_keel_error_gives_its_code() -> None:
    run = await run_tool(raising(ToolError("the depot is closed")), {}, context=None, timeout=LONG)
    assert (run.error_message, run.error_code) == ("ToolError: the depot is closed", "keel.tool")


async def test_an_exception_without_message_is_named_by_its_type() -> None:
    run = await run_tool(raising(KeyError()), {}, context=None, timeout=LONG)
    assert run.error_message == "KeyError"


async def test_wrong_arguments_reaching_the_function_are_an_error() -> None:
    @tool(description="Needs x.")
    async def needs_x(x: int) -> int:
        return x

    run = await run_tool(definition_of(needs_x), {"y": 1}, context=None, timeout=LONG)
    assert run.outcome == "error"
    assert run.error_message is not None and run.error_message.startswith("TypeError: ")


async def test_a_tools_own_timeout_error_is_an_error_not_a_timeout() -> None:
    run = await run_tool(raising(TimeoutError("upstream slow")), {}, context=None, timeout=LONG)
    assert (run.outcome, run.error_message) == ("error", "TimeoutError: upstream slow")


async def test_timeout() -> None:
    seen: list[str] = []
    never = asyncio.Event()

    @tool(description="Wait forever.")
    async def slow() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    run = await run_tool(definition_of(slow), {}, context=None, timeout=0.01)
    message = "tool 'slow' timed out after 0.01 seconds"
    assert run == ToolRun(
        outcome="timeout",
        result_text=f"Error: {message}",
        llm_response=None,
        error_message=message,
        error_code="tool.timeout",
    )
    assert run.is_error
    assert seen == ["cancelled"]


async def test_a_timed_out_tool_that_raises_something_else_is_still_a_timeout() -> None:
    never = asyncio.Event()

    @tool(description="Wait, then complain.")
    async def grumpy() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            raise RuntimeError("interrupted") from None

    run = await run_tool(definition_of(grumpy), {}, context=None, timeout=0.01)
    assert run.outcome == "timeout"


async def test_the_deadline_counts_from_the_call_and_bites_at_a_suspension() -> None:
    # A tool that never suspends finishes whatever the deadline; one that suspends after
    # the deadline passed times out there, as it does when the timer ran from the start.
    @tool(description="Answer at once.")
    async def instant() -> str:
        return "done"

    @tool(description="Yield once, then answer.")
    async def yielding() -> str:
        await asyncio.sleep(0)
        return "done"

    assert (await run_tool(definition_of(instant), {}, context=None, timeout=0)).outcome == (
        "success"
    )
    assert (await run_tool(definition_of(yielding), {}, context=None, timeout=0)).outcome == (
        "timeout"
    )
    assert (await run_tool(definition_of(yielding), {}, context=None, timeout=LONG)).outcome == (
        "success"
    )


async def test_a_tool_that_swallows_its_deadline_still_times_out() -> None:
    never = asyncio.Event()
    seen: list[str] = []

    @tool(description="Wait, swallow the cancellation, wait again.")
    async def stubborn() -> str:
        await asyncio.sleep(0)
        try:
            await never.wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
        await asyncio.sleep(0)
        return "finished anyway"

    run = await run_tool(definition_of(stubborn), {}, context=None, timeout=0.01)
    assert seen == ["cancelled"]
    assert run.outcome == "success"  # what the deadline did not stop, it did not stop


def waiting_tool(started: asyncio.Event, seen: list[str], *, swallow: bool) -> ToolDefinition:
    never = asyncio.Event()

    @tool(description="Wait until cancelled.")
    async def waiting() -> str:
        started.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            if not swallow:
                raise
        return "finished anyway"

    return definition_of(waiting)


@pytest.mark.parametrize("swallow", [False, True])
async def test_cancelling_the_caller_propagates(swallow: bool) -> None:
    started = asyncio.Event()
    seen: list[str] = []
    definition = waiting_tool(started, seen, swallow=swallow)
    task = asyncio.create_task(run_tool(definition, {}, context=None, timeout=LONG))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]  # the tool saw CancelledError at its await
    assert task.cancelled()


async def test_a_cancelled_error_nobody_asked_for_is_the_tools_failure() -> None:
    async def inner() -> None:
        await asyncio.Event().wait()

    @tool(description="Await a task that someone else cancels.")
    async def fragile() -> None:
        job = asyncio.ensure_future(inner())
        asyncio.get_running_loop().call_soon(job.cancel)
        await job

    run = await run_tool(definition_of(fragile), {}, context=None, timeout=LONG)
    assert (run.outcome, run.error_message) == ("error", "CancelledError")


async def test_the_context_is_passed_and_current() -> None:
    @tool(description="Use the context.")
    async def uses_context(context: ToolContext | None = None) -> str:
        assert context is not None
        context.memory.set("seen", True)
        return current_tool_context().conversation_id

    context = LocalToolContext(conversation_id="c-1")
    run = await run_tool(definition_of(uses_context), {}, context=context, timeout=LONG)
    assert run.result_text == "c-1"
    assert context.memory.get("seen") is True


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


@dataclass(frozen=True)
class Parcel:
    size: Size
    weight: float
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise ValueError("weight must not be negative")


async def test_arguments_are_converted_to_the_annotated_types() -> None:
    received: dict[str, object] = {}

    @tool(description="Ship.")
    async def ship(parcel: Parcel, size: Size, count: int, labels: set[str] | None = None) -> None:
        received.update(parcel=parcel, size=size, count=count, labels=labels)

    arguments = {
        "parcel": {"size": "l", "weight": 2, "tags": ["fragile"]},
        "size": "s",
        "count": 3.0,
        "labels": ["a", "a"],
    }
    run = await run_tool(definition_of(ship), arguments, context=None, timeout=LONG)
    assert run.outcome == "success"
    assert received == {
        "parcel": Parcel(size=Size.LARGE, weight=2.0, tags=("fragile",)),
        "size": Size.SMALL,
        "count": 3,
        "labels": {"a"},
    }
    assert type(received["count"]) is int


async def test_a_failing_conversion_is_the_tools_error() -> None:
    @tool(description="Ship.")
    async def ship(parcel: Parcel) -> None:
        raise AssertionError("not reached")

    arguments = {"parcel": {"size": "s", "weight": -1}}
    run = await run_tool(definition_of(ship), arguments, context=None, timeout=LONG)
    assert (run.outcome, run.error_message) == ("error", "ValueError: weight must not be negative")


def test_coerce_arguments_leaves_what_it_cannot_place() -> None:
    @tool(description="Mixed.")
    async def mixed(
        choice: Literal[Size.SMALL, Size.LARGE],
        either: int | str,
        pairs: dict[str, Size],
        fixed: tuple[int, Size],
        anything: Any = None,
        maybe: Parcel | None = None,
    ) -> None:
        pass

    arguments = {
        "choice": "l",
        "either": "7",
        "pairs": {"a": "s"},
        "fixed": [1, "l"],
        "anything": {"x": 1},
        "maybe": None,
    }
    assert coerce_arguments(definition_of(mixed), arguments) == {
        "choice": Size.LARGE,
        "either": "7",
        "pairs": {"a": Size.SMALL},
        "fixed": (1, Size.LARGE),
        "anything": {"x": 1},
        "maybe": None,
    }


class Opaque:
    def __str__(self) -> str:
        return "opaque thing"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (MappingProxyType({"b": (1, 2), "a": None}), '{"a":null,"b":[1,2]}'),
        ({"s": frozenset({"y", "x"})}, '{"s":["x","y"]}'),
        ({"size": Size.SMALL}, '{"size":"s"}'),
        (Parcel(size=Size.LARGE, weight=1.5), '{"size":"l","tags":[],"weight":1.5}'),
        (Opaque(), "opaque thing"),
        ({"n": float("nan")}, "{'n': nan}"),
        ({1: "a", "b": 2}, "{1: 'a', 'b': 2}"),
        (True, "true"),
    ],
)
def test_to_result_text(value: object, text: str) -> None:
    assert to_result_text(value) == text


def hook_of(func: Callable[..., Any], *, context: bool = False) -> HookDefinition:
    return HookDefinition(
        entry="email",
        name="run_after_setting_email",
        func=func,
        is_async=asyncio.iscoroutinefunction(func),
        context_param="context" if context else None,
        module_file="skills/s/tools.py",
        line=1,
    )


def async_hook(outcome: object) -> HookDefinition:
    async def hook() -> object:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return hook_of(hook)


def sync_hook(outcome: object) -> HookDefinition:
    def hook() -> object:
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    return hook_of(hook)


@pytest.mark.parametrize("make", [async_hook, sync_hook])
@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (ToolResult(error="not an email"), "not an email"),
        (ToolResult(llm_response={"error": "domain unknown"}), "domain unknown"),
        (ToolResult(llm_response={"error": {"code": 4}}), '{"code":4}'),
        (ToolResult(llm_response={"ok": False, "message": "try again"}), "try again"),
        (ToolResult(llm_response={"ok": False, "reason": "blocked"}), "blocked"),
        ({"ok": False}, "hook 'run_after_setting_email' rejected the value"),
        ({"error": "bare dict"}, "bare dict"),
        ({"success": False, "message": "taken"}, "taken"),
        (InvalidMemoryValue("must contain @"), "must contain @"),
        (InvalidMemoryValue(), "hook 'run_after_setting_email' rejected the value"),
        (RuntimeError("lookup down"), "RuntimeError: lookup down"),
    ],
)
async def test_hook_rejections(
    make: Callable[[object], HookDefinition], outcome: object, message: str
) -> None:
    run = await run_hook(make(outcome), context=None, timeout=LONG)
    assert run == HookRun(rejected=True, message=message)


@pytest.mark.parametrize(
    "outcome",
    [
        None,
        True,
        "fine",
        ToolResult(),
        ToolResult(llm_response={"ok": True}),
        ToolResult(llm_response={"error": None, "ok": True}),
        {"error": "no longer", "ok": True},
        {"found": 3},
    ],
)
async def test_hook_acceptance(outcome: object) -> None:
    assert await run_hook(async_hook(outcome), context=None, timeout=LONG) == HookRun(
        rejected=False, message=None
    )
    assert await run_hook(sync_hook(outcome), context=None, timeout=LONG) == HookRun(
        rejected=False, message=None
    )


async def test_hook_gets_the_context() -> None:
    def hook(context: ToolContext | None = None) -> ToolResult:
        assert context is not None
        email = context.memory.get("email")
        return ToolResult(error=None if "@" in str(email) else f"{email} is not an email")

    context = LocalToolContext()
    context.memory.set("email", "nobody")
    run = await run_hook(hook_of(hook, context=True), context=context, timeout=LONG)
    assert run == HookRun(rejected=True, message="nobody is not an email")


async def test_hook_timeout_rejects() -> None:
    never = asyncio.Event()

    async def hook() -> None:
        await never.wait()

    run = await run_hook(hook_of(hook), context=None, timeout=0.01)
    assert run == HookRun(
        rejected=True, message="hook 'run_after_setting_email' timed out after 0.01 seconds"
    )


async def test_cancelling_a_hooks_caller_propagates() -> None:
    started = asyncio.Event()
    never = asyncio.Event()

    async def hook() -> None:
        started.set()
        await never.wait()

    task = asyncio.create_task(run_hook(hook_of(hook), context=None, timeout=LONG))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_tool_gets_plain_lists_and_dicts_even_from_frozen_arguments() -> None:
    # A confirmed or resumed call's arguments come back from the log frozen (tuples,
    # read-only mappings); the tool must see what a direct call gives it.
    seen: list[object] = []

    @tool(description="Keep what it was given.")
    async def keep(items: list[str], passenger: dict[str, Any], loose: Any) -> str:
        seen.extend([items, passenger, loose])
        return "ok"

    frozen = {
        "items": ("a", "b"),
        "passenger": MappingProxyType({"names": ("Ann",)}),
        "loose": MappingProxyType({"legs": (MappingProxyType({"n": 1}),)}),
    }
    run = await run_tool(definition_of(keep), frozen, context=None, timeout=LONG)
    assert run.outcome == "success"
    assert seen == [["a", "b"], {"names": ["Ann"]}, {"legs": [{"n": 1}]}]
    assert type(seen[0]) is list and type(seen[1]) is dict and type(seen[2]) is dict
    assert type(seen[1]["names"]) is list and type(seen[2]["legs"][0]) is dict  # type: ignore[index]
