"""Turning a named response into a bot message (pure).

The variant is chosen by the delivery rule (`select_variant`; conditions evaluated with
the engine's reading rights), placeholders are filled from memory (`{session.<ns>.<entry>}`,
or `{entry}` resolved in the active skill first, then the project), and buttons keep their
payloads, filled the same way, so a later `set:` tap can be matched against them exactly.
A placeholder with no value is never sent: see `render_response`.

A variant that asks to be rephrased (`metadata.rephrase: true`, or any variant under
`endpoints.yml` `nlg: {type: rephrase, rephrase_all: true}` that does not say
`rephrase: false`) is rendered with `metadata.rephrase: true`; `keel.loop.rephrase` then
rewrites its filled text. When a placeholder of it was filled from a `pii` field the message
also carries `metadata.rephrase_blocked: pii`: the value must not reach a model, so the text
goes out verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from keel.events.base import Button
from keel.events.fold import ConversationState
from keel.events.model import BotMessage
from keel.memory import MemorySchema, reader_for
from keel.memory.access import ENGINE_READER
from keel.memory.values import render_for_prompt
from keel.project.definition import AgentDefinition
from keel.project.placeholders import Lookup, fill_checked
from keel.project.response_delivery import fitting_variants
from keel.project.response_model import Button as ResponseButton
from keel.project.response_model import Variant

UNFILLED = "response.placeholder.unfilled"
"""The code of a response withheld because a placeholder of it has no value."""

INTERNAL_ERROR = "utter_internal_error"
_LAST_RESORT = "Something went wrong on my side. Please try again."


def _lookup(
    schema: MemorySchema,
    memory: Mapping[str, object],
    active: str | None,
    extra: Mapping[str, str],
    private: list[str],
) -> Lookup:
    """The placeholder lookup; the keys of `pii` fields it filled are added to `private`."""

    def lookup(namespace: str | None, entry: str) -> str | None:
        if namespace is None and entry in extra:
            return extra[entry] or None  # an empty value fills nothing (never sent blank)
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
        if field is not None and field.pii:
            private.append(key)
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
    (fail closed: a response that cannot be chosen is not sent).

    A variant with a placeholder that has no value is never sent as written: the next
    variant that fits and fills completely is sent instead (the default variant is the
    response's fallback), else `utter_internal_error`. Either way the message carries
    `metadata.withheld`: the code `response.placeholder.unfilled`, the response and the
    placeholders that had no value.
    """
    response = definition.responses.get(name)
    if response is None:
        return None
    read = reader_for(state.memory, definition.memory, ENGINE_READER)
    private: list[str] = []
    lookup = _lookup(definition.memory, state.memory, state.active_skill_id, extra or {}, private)
    unfilled: list[str] = []
    fitting = fitting_variants(response, read)
    every = definition.endpoints.rephrase_all
    for variant in fitting:
        private.clear()
        message, missing = _filled(name, variant, lookup, rephrase=_asks_rephrase(variant, every))
        if not missing:
            if private and message.metadata.get("rephrase") is True:
                message = replace(message, metadata={**message.metadata, "rephrase_blocked": "pii"})
            return _withheld(message, name, unfilled) if unfilled else message
        unfilled += [p for p in missing if p not in unfilled]
    if not fitting:
        return None
    return _withheld(_internal_error(definition, state, lookup), name, unfilled)


def _asks_rephrase(variant: Variant, every: bool) -> bool:
    """Whether `variant` is rephrased: `metadata.rephrase: true`, or `rephrase_all` unless
    the variant says `rephrase: false`."""
    flag = variant.metadata.get("rephrase")
    return flag is True or (every and flag is not False)


def _filled(
    name: str, variant: Variant, lookup: Lookup, *, rephrase: bool = False
) -> tuple[BotMessage, tuple[str, ...]]:
    """The message of `variant`, and the placeholders it could not fill."""
    missing: list[str] = []

    def fill(text: str) -> str:
        filled, left = fill_checked(text, lookup)
        missing.extend(left)
        return filled

    buttons = tuple(
        Button(title=fill(b.title), payload=fill(b.payload))
        for b in (variant.buttons if isinstance(variant.buttons, tuple) else ())
        if isinstance(b, ResponseButton)
    )
    message = BotMessage(
        text=fill(variant.text),
        buttons=buttons,
        utter_action=name,
        response_source="verbatim",
        metadata={"rephrase": True} if rephrase else {},
    )
    return message, tuple(dict.fromkeys(missing))


def _internal_error(
    definition: AgentDefinition,
    state: ConversationState,
    lookup: Lookup,
) -> BotMessage:
    """`utter_internal_error` (a fixed text if it cannot be filled either)."""
    response = definition.responses.get(INTERNAL_ERROR)
    read = reader_for(state.memory, definition.memory, ENGINE_READER)
    for variant in fitting_variants(response, read) if response is not None else ():
        message, missing = _filled(INTERNAL_ERROR, variant, lookup)
        if not missing:
            return message
    return BotMessage(text=_LAST_RESORT, utter_action=INTERNAL_ERROR, response_source="verbatim")


def _withheld(message: BotMessage, name: str, placeholders: list[str]) -> BotMessage:
    record = {"code": UNFILLED, "response": name, "placeholders": placeholders}
    return replace(message, metadata={**message.metadata, "withheld": record})
