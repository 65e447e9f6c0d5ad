"""Events for things that change the world or memory: tool runs, memory writes, pause points.

Every tool run is recorded as `tool_executed` plus the compatibility copy
`mcp_tool_executed` (no replay metadata); every memory write as `memory_set` plus the
compatibility copy `slot_set`. Logs that hold only the compatibility copies still fold.
A model proposal the engine refused or dropped is recorded as `tool_call_refused` (schema
v2), so the log shows what the model tried and what it was told. Since schema v4 a failed
run says why in `error_code` (a timeout, an error result, an unreachable MCP server...).
"""

from dataclasses import dataclass

from keel.events.base import EventBase, JsonMapping, JsonValue, ToolSource


@dataclass(frozen=True, kw_only=True, slots=True)
class _ToolRun(EventBase):
    tool_name: str
    arguments: JsonMapping
    """The arguments the tool ran with (after validation)."""

    source: ToolSource
    """`local` for Python tools, `mcp` for tools served by an MCP server."""

    result: str
    """What the tool returned, as the string the model saw."""

    is_error: bool
    error_message: str | None = None
    mcp_server: str | None = None
    """Set only when `source` is `mcp`."""

    error_code: str | None = None
    """Why the run failed, dotted; None when it succeeded. `tool.timeout`, `tool.error_result`
    (the tool returned an error: a `ToolResult.error`, an MCP `isError` result),
    `tool.raised`, `mcp.server_unavailable` (unreachable, or the connection was lost during
    the call), `mcp.call_failed` (the server refused the call), or another `KeelError` code.
    Added in schema version 4 (older runs decode with None)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolExecuted(_ToolRun):
    """A local or MCP tool actually ran (framework tools included).

    A confirmed run after a pause point carries `metadata.source = "tool_confirmation"`.
    """

    kind = "tool_executed"

    tool_call_id: str
    """The id of the model's tool call, or of the `execute_tool` step run."""

    tool_batch_id: str | None = None
    """Groups the tool calls of one model response; order within a batch is kept."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCallRefused(EventBase):
    """A model proposal the engine refused or dropped instead of carrying it out.

    Covers every proposal that arrives as a tool call (a builder tool, a skill activation,
    a memory write through `set_fields`, a `listen` mixed with text...). Nothing ran and
    nothing changed: the fold ignores it; it is in the log so the refusal is on record.
    Added in schema version 2.
    """

    kind = "tool_call_refused"

    tool_name: str
    arguments: str
    """The raw argument text as the model sent it (it may not even be valid JSON)."""

    code: str
    """Dotted refusal code, e.g. `tool.arguments.invalid`, `tool.not_offered`,
    `tool.requires_closed`, `skill.not_eligible`, `memory.write.not_llm_settable`,
    `listen.dropped`."""

    message: str
    """What the model was told (the tool error it saw), or why the proposal was dropped."""

    tool_call_id: str
    """The id of the model's tool call."""

    tool_batch_id: str | None = None
    """Groups the tool calls of one model response, like `ToolExecuted.tool_batch_id`."""

    retryable: bool = False
    """Whether the model may try again in this turn (e.g. after fixing its arguments)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class McpToolExecuted(_ToolRun):
    """Compatibility copy of `tool_executed` without replay metadata."""

    kind = "mcp_tool_executed"


@dataclass(frozen=True, kw_only=True, slots=True)
class MemorySet(EventBase):
    """A memory key was written.

    `key` is scope-qualified: `project.<entry>`, `<skill_id>.<entry>` or `system.<name>`
    (plus the engine slot `session_started_metadata`).
    """

    kind = "memory_set"

    key: str
    value: JsonValue


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryCleared(EventBase):
    """A memory key was cleared (it no longer has a value)."""

    kind = "memory_cleared"

    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SlotSet(EventBase):
    """Compatibility copy of `memory_set` (Rasa's slot event); older logs may hold only this."""

    kind = "slot_set"

    name: str
    """The memory key, scope-qualified like `MemorySet.key`."""

    value: JsonValue
    filled_by: str | None = None
    """What wrote the value (a tool, `set_fields`, a `set:` tap...), when known."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PausePointCreated(EventBase):
    """A tool call needs confirmation: it is stored as a pause point instead of running.

    The fields mirror Mantle's `system.pending_tool_confirmation` record.
    """

    kind = "pause_point_created"

    pause_id: str
    tool_name: str
    tool_args: JsonMapping
    confirmation_ask: str
    """The resolved text of the question put to the user."""

    utter_on_user_denial: str | None = None
    skill_id: str | None = None
    frame_id: str | None = None
    execute_step_id: str | None = None
    """The `execute_tool` step that asked, when a block step (not the model) called the tool."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PausePointResolved(EventBase):
    """The user (or the approval API) answered a pause point."""

    kind = "pause_point_resolved"

    pause_id: str
    approved: bool
