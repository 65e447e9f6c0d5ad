"""The values a `responses.yml` turns into: responses, variants and buttons (spec §9.1-§9.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from keel.conditions import Condition
from keel.project.placeholders import Placeholder, SetPayload


@dataclass(frozen=True, kw_only=True, slots=True)
class Button:
    """A static button; `payload` is the title when none was written."""

    title: str
    payload: str
    line: int | None = None
    set_payload: SetPayload | None = None
    """The parsed payload when it is a valid `set:` payload."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ButtonSource:
    """Dynamic buttons: the tool `tool` supplies them when the variant is delivered."""

    tool: str
    line: int | None = None


Buttons = tuple[Button, ...] | ButtonSource


@dataclass(frozen=True, kw_only=True, slots=True)
class Variant:
    """One wording of a response."""

    text: str
    condition: Condition | None = None
    """The parsed `condition`; None for a default variant or one whose condition is invalid."""
    condition_source: str | None = None
    """The `condition` as written; None only for a default (unconditioned) variant."""
    metadata: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    buttons: Buttons = ()
    line: int | None = None
    placeholders: tuple[Placeholder, ...] = ()
    """Placeholders in the text, button titles and payloads."""

    @property
    def is_default(self) -> bool:
        """True when the variant has no `condition`."""
        return self.condition_source is None

    @property
    def rephrase(self) -> bool:
        """True when `metadata.rephrase: true` asks for an LLM rephrase."""
        return self.metadata.get("rephrase") is True


@dataclass(frozen=True, kw_only=True, slots=True)
class Response:
    """A named response (`utter_*`) and its variants, in YAML order."""

    name: str
    file: str
    line: int | None
    variants: tuple[Variant, ...]

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        """Every placeholder of every variant."""
        return tuple(p for v in self.variants for p in v.placeholders)

    @property
    def set_payloads(self) -> tuple[SetPayload, ...]:
        """Every valid `set:` payload of every static button (for cross-file checks)."""
        return tuple(
            b.set_payload
            for v in self.variants
            if isinstance(v.buttons, tuple)
            for b in v.buttons
            if b.set_payload is not None
        )

    @property
    def button_sources(self) -> tuple[ButtonSource, ...]:
        """Every dynamic-button tool reference (for cross-file checks)."""
        return tuple(v.buttons for v in self.variants if isinstance(v.buttons, ButtonSource))
