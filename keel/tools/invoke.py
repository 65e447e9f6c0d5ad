"""Call a tool or a post-write hook the way the engine does.

Arguments are passed by name, the context as the `context` keyword when the function takes
one, and `current_tool_context()` returns that context for the duration of the call. No
argument validation, timeout or error wrapping happens here; that is the dispatcher's job.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

from keel.errors import ToolError
from keel.tools.context import ToolContext, use_tool_context
from keel.tools.definition import HookDefinition, ToolDefinition


async def invoke_tool(
    definition: ToolDefinition,
    arguments: Mapping[str, Any],
    context: ToolContext | None = None,
) -> Any:
    """Await `definition.func(**arguments, context=context)` and return what it returns."""
    kwargs = dict(arguments)
    if definition.context_param is not None:
        if definition.context_param in kwargs:
            raise ToolError(f"tool {definition.name!r}: `context` cannot be passed as an argument")
        kwargs[definition.context_param] = context
    with use_tool_context(context) if context is not None else nullcontext():
        return await definition.func(**kwargs)


async def invoke_hook(hook: HookDefinition, context: ToolContext | None = None) -> Any:
    """Run a post-write hook (sync or async) and return what it returns."""
    kwargs: dict[str, Any] = {}
    if hook.context_param is not None:
        kwargs[hook.context_param] = context
    with use_tool_context(context) if context is not None else nullcontext():
        outcome = hook.func(**kwargs)
        if inspect.isawaitable(outcome):
            outcome = await outcome
    return outcome
