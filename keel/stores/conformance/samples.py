"""Events used by the contract checks."""

from __future__ import annotations

from keel.events.model import (
    BotMessage,
    Button,
    Event,
    MemorySet,
    PausePointCreated,
    StackChanged,
    StackFrame,
    ToolExecuted,
    UserMessage,
)


def messages(tag: str, count: int) -> list[Event]:
    """`count` distinct user messages labelled with `tag`."""
    return [
        UserMessage(text=f"{tag} {i}", message_id=f"{tag}-{i}", timestamp=float(i))
        for i in range(1, count + 1)
    ]


def varied() -> list[Event]:
    """A few events with every kind of value a backend must keep exactly."""
    frames = (
        StackFrame(frame_id="f1", skill_id="returns", type="skill"),
        StackFrame(
            frame_id="f2", skill_id="returns", type="ordered_block", block_id="main", step_id="s"
        ),
    )
    return [
        UserMessage(text='Grüße, 你好 🚀 "quoted" \\ \n\x85\u2028\x00', message_id="m1"),
        ToolExecuted(
            tool_name="lookup",
            arguments={"ids": [1, 2.5, -0.0, 10**20], "deep": {"a": [None, True, {"b": ""}]}},
            source="mcp",
            result='{"ok": true}',
            is_error=False,
            mcp_server="orders",
            tool_call_id="c1",
            tool_batch_id="b1",
            timestamp=1767225600.123456,
            metadata={"skill_id": "returns"},
        ),
        MemorySet(key="project.total", value=1e-7, metadata={"provenance": {"step": "x"}}),
        StackChanged(frames=frames),
        BotMessage(
            text="Pick",
            buttons=(Button(title="Yes", payload="set:session.project.ok=true"),),
            response_source="verbatim",
            utter_action="utter_pick",
        ),
        PausePointCreated(
            pause_id="p1", tool_name="refund", tool_args={}, confirmation_ask="Sure?"
        ),
    ]
