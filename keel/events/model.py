"""The event vocabulary: every event kind, the `Event` union and the explicit kind registry.

Kinds are listed by hand in `EVENT_TYPES` (no discovery by subclass walking): adding a kind
means adding its class here, to the union, and a bump of the codec's schema summary.

| group | kinds |
| --- | --- |
| skills (seed 001) | skill_activated, _completed, _cancelled, _interrupted, _resumed |
| blocks | ordered_block_entered, _completed, _cancelled, _interrupted, _resumed |
| flows (compat) | flow_started, flow_completed, flow_cancelled, flow_interrupted, flow_resumed |
| stack | stack_changed, step_advanced |
| effects (seed 001) | tool_executed, memory_set, memory_cleared |
| effects (compat) | mcp_tool_executed, slot_set |
| refusals (v2) | tool_call_refused |
| pause points | pause_point_created, pause_point_resolved |
| conversation | session_started, user_message, bot_message, bot_turn_ended, turn_started, |
|  | turn_ended, conversation_state_changed |
| measurements | model_called, stage_timed, stages_timed (v8: a turn's stages in one event) |
| decisions (v3) | routing_decided, history_compressed |
| plan cache (v5) | plan_cache_decided, plan_executed |
| voice (v7) | barge_in |
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeAlias

from keel.events.base import (
    EMPTY,
    Button,
    ConversationStatus,
    EventBase,
    FrameType,
    JsonMapping,
    JsonValue,
    NotJsonValue,
    ResponseSource,
    RoutingSource,
    StackFrame,
    StopReason,
    ToolSource,
    freeze_json,
    freeze_mapping,
)
from keel.events.conversation import (
    BotMessage,
    BotTurnEnded,
    ConversationStateChanged,
    ModelCalled,
    SessionStarted,
    StagesTimed,
    StageTimed,
    TurnEnded,
    TurnStarted,
    UserMessage,
)
from keel.events.decisions import HistoryCompressed, RoutingDecided
from keel.events.effects import (
    McpToolExecuted,
    MemoryCleared,
    MemorySet,
    PausePointCreated,
    PausePointResolved,
    SlotSet,
    ToolCallRefused,
    ToolExecuted,
)
from keel.events.lifecycle import (
    FlowCancelled,
    FlowCompleted,
    FlowInterrupted,
    FlowResumed,
    FlowStarted,
    OrderedBlockCancelled,
    OrderedBlockCompleted,
    OrderedBlockEntered,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    SkillActivated,
    SkillCancelled,
    SkillCompleted,
    SkillInterrupted,
    SkillResumed,
    StackChanged,
    StepAdvanced,
)
from keel.events.plans import PlanCacheDecided, PlanExecuted
from keel.events.voice import BargeIn

Event: TypeAlias = (
    SkillActivated
    | SkillCompleted
    | SkillCancelled
    | SkillInterrupted
    | SkillResumed
    | OrderedBlockEntered
    | OrderedBlockCompleted
    | OrderedBlockCancelled
    | OrderedBlockInterrupted
    | OrderedBlockResumed
    | FlowStarted
    | FlowCompleted
    | FlowCancelled
    | FlowInterrupted
    | FlowResumed
    | StackChanged
    | StepAdvanced
    | ToolExecuted
    | ToolCallRefused
    | McpToolExecuted
    | MemorySet
    | MemoryCleared
    | SlotSet
    | PausePointCreated
    | PausePointResolved
    | SessionStarted
    | UserMessage
    | BotMessage
    | BotTurnEnded
    | TurnStarted
    | TurnEnded
    | ConversationStateChanged
    | ModelCalled
    | StageTimed
    | StagesTimed
    | RoutingDecided
    | HistoryCompressed
    | PlanCacheDecided
    | PlanExecuted
    | BargeIn
)
"""Any event Keel writes to a conversation log."""

_ALL: tuple[type[Event], ...] = (
    SkillActivated,
    SkillCompleted,
    SkillCancelled,
    SkillInterrupted,
    SkillResumed,
    OrderedBlockEntered,
    OrderedBlockCompleted,
    OrderedBlockCancelled,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    FlowStarted,
    FlowCompleted,
    FlowCancelled,
    FlowInterrupted,
    FlowResumed,
    StackChanged,
    StepAdvanced,
    ToolExecuted,
    ToolCallRefused,
    McpToolExecuted,
    MemorySet,
    MemoryCleared,
    SlotSet,
    PausePointCreated,
    PausePointResolved,
    SessionStarted,
    UserMessage,
    BotMessage,
    BotTurnEnded,
    TurnStarted,
    TurnEnded,
    ConversationStateChanged,
    ModelCalled,
    StageTimed,
    StagesTimed,
    RoutingDecided,
    HistoryCompressed,
    PlanCacheDecided,
    PlanExecuted,
    BargeIn,
)

EVENT_TYPES: Mapping[str, type[Event]] = MappingProxyType({cls.kind: cls for cls in _ALL})
"""Wire name (`kind`) -> event class, for every kind Keel can read and write."""

__all__ = [
    "EMPTY",
    "EVENT_TYPES",
    "BargeIn",
    "BotMessage",
    "BotTurnEnded",
    "Button",
    "ConversationStateChanged",
    "ConversationStatus",
    "Event",
    "EventBase",
    "FlowCancelled",
    "FlowCompleted",
    "FlowInterrupted",
    "FlowResumed",
    "FlowStarted",
    "FrameType",
    "HistoryCompressed",
    "JsonMapping",
    "JsonValue",
    "McpToolExecuted",
    "MemoryCleared",
    "MemorySet",
    "ModelCalled",
    "NotJsonValue",
    "OrderedBlockCancelled",
    "OrderedBlockCompleted",
    "OrderedBlockEntered",
    "OrderedBlockInterrupted",
    "OrderedBlockResumed",
    "PausePointCreated",
    "PausePointResolved",
    "PlanCacheDecided",
    "PlanExecuted",
    "ResponseSource",
    "RoutingDecided",
    "RoutingSource",
    "SessionStarted",
    "SkillActivated",
    "SkillCancelled",
    "SkillCompleted",
    "SkillInterrupted",
    "SkillResumed",
    "SlotSet",
    "StackChanged",
    "StackFrame",
    "StageTimed",
    "StagesTimed",
    "StepAdvanced",
    "StopReason",
    "ToolCallRefused",
    "ToolExecuted",
    "ToolSource",
    "TurnEnded",
    "TurnStarted",
    "UserMessage",
    "freeze_json",
    "freeze_mapping",
]
