"""Turning a named response into a bot message (pure).

The variant is chosen by `select_variant` (conditions evaluated with the engine's reading
rights), placeholders are filled from memory (`{session.<ns>.<entry>}`, or `{entry}`
resolved in the active skill first, then the project), and buttons keep their payloads,
filled the same way, so a later `set:` tap can be matched against them exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from keel.events.base import Button
from keel.events.fold import ConversationState
from keel.events.model import BotMessage
from keel.memory import MemorySchema, reader_for
from keel.memory.access import ENGINE_READER
from keel.memory.values import render_for_prompt
from keel.project.definition import AgentDefinition
from keel.project.placeholders import fill_placeholders
from keel.project.response_delivery import select_variant
from keel.project.response_model import Button as ResponseButton


def _lookup(
    schema: MemorySchema, memory: Mapping[str, object], active: str | None
) -> Callable[[str | None, str], str | None]:
    def lookup(namespace: str | None, entry: str) -> str | None:
        if namespace is not None:
            key = f"{namespace}.{entry}"
        else:
            field = schema.resolve(entry, active)
            if field is None:
                return None
            key = field.key
        if key not in memory or memory[key] is None:
            return None
        field = schema.field(key)
        value = memory[key]
        return (
            render_for_prompt(field, value) if field is not None and not field.pii else str(value)
        )

    return lookup


def render_response(
    definition: AgentDefinition,
    state: ConversationState,
    name: str,
    *,
    extra: Mapping[str, str] | None = None,
) -> BotMessage | None:
    """The bot message for response `name`, or None when it is missing or no variant fits
    (fail closed: a response that cannot be chosen is not sent)."""
    response = definition.responses.get(name)
    if response is None:
        return None
    read = reader_for(state.memory, definition.memory, ENGINE_READER)
    variant = select_variant(response, read)
    if variant is None:
        return None
    lookup = _lookup(definition.memory, state.memory, state.active_skill_id)

    def fill(text: str) -> str:
        for key, value in (extra or {}).items():
            text = text.replace("{" + key + "}", value)
        return fill_placeholders(text, lookup)

    buttons = tuple(
        Button(title=fill(b.title), payload=fill(b.payload))
        for b in (variant.buttons if isinstance(variant.buttons, tuple) else ())
        if isinstance(b, ResponseButton)
    )
    return BotMessage(
        text=fill(variant.text),
        buttons=buttons,
        utter_action=name,
        response_source="verbatim",
        metadata={"rephrase": True} if variant.rephrase else {},
    )
