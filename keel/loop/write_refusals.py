"""A block's `set_memory` write the rules refused: on record, never dropped silently.

The refusal is appended as `tool_call_refused` (tool `set_memory`, the refusal's
`memory.write.*` code, the step as `tool_call_id` `step:<frame>:<step>`, like an
`execute_tool` step's runs) and logged at WARNING on `keel.loop` with the conversation and
turn ids. The block goes on to its next step: the write is skipped, as before.
"""

from __future__ import annotations

import json
import logging

from keel.events.model import ToolCallRefused
from keel.loop.memory_ops import Refusal
from keel.loop.turn import TurnContext

_log = logging.getLogger("keel.loop")

SET_MEMORY = "set_memory"
"""The `tool_name` a refused `set_memory` step is recorded under."""


async def refused_set_memory(
    t: TurnContext, *, call_id: str, skill_id: str, entry: str, value: object, refusal: Refusal
) -> None:
    """Record and log one refused entry of a `set_memory` step."""
    ids = {"conversation_id": t.recorder.conversation_id, "turn_id": t.turn_id}
    _log.warning(
        "set_memory step %s of skill %s: %s refused (%s: %s) (conversation %s, turn %s)",
        call_id,
        skill_id,
        entry,
        refusal.code,
        refusal.message,
        ids["conversation_id"],
        ids["turn_id"],
        extra=ids,
    )
    await t.emit(
        ToolCallRefused(
            tool_name=SET_MEMORY,
            arguments=json.dumps(
                {entry: value}, separators=(",", ":"), ensure_ascii=False, default=str
            ),
            code=refusal.code,
            message=refusal.message,
            tool_call_id=call_id,
        )
    )
