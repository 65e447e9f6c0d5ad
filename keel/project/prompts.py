"""`prompts:` in agent.yml: per-section overrides of the built-in system prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from keel.source.reporter import Reporter, key_line

TEXT_PROMPT_KEYS = frozenset(
    {"text_rules", "voice_rules", "ack_rule", "ack_reminder", "routing_no_active_skill"}
)
PROMPT_KEYS = TEXT_PROMPT_KEYS | {"ack_enabled", "ack_examples"}


@dataclass(frozen=True, kw_only=True, slots=True)
class Prompts:
    """Prompt-section overrides; None means "use the built-in default"."""

    text_rules: str | None = None
    voice_rules: str | None = None
    ack_rule: str | None = None
    ack_reminder: str | None = None
    ack_enabled: bool | None = None
    ack_examples: tuple[str, ...] | None = None
    routing_no_active_skill: str | None = None


def parse_prompts(r: Reporter, data: Any, line: int | None) -> Prompts:
    """Read the `prompts` mapping; unknown keys warn, wrongly typed values are errors."""
    if data is None:
        return Prompts()
    if not isinstance(data, dict):
        r.error("config.prompts.bad_value", line, "`prompts` must be a mapping")
        return Prompts()
    values: dict[str, Any] = {}
    for key, value in data.items():
        where = key_line(data, key)
        if key not in PROMPT_KEYS:
            message = f"unknown prompt section `prompts.{key}` is ignored"
            r.warning("config.prompts.unknown_key", where, message, key=f"prompts.{key}")
        elif value is None:
            continue
        elif key in TEXT_PROMPT_KEYS:
            values[key] = _text(r, key, value, where)
        elif key == "ack_enabled":
            values[key] = _flag(r, value, where)
        else:
            values[key] = _examples(r, value, where)
    return Prompts(**{k: v for k, v in values.items() if v is not None})


def _text(r: Reporter, key: str, value: object, line: int | None) -> str | None:
    if isinstance(value, str):
        return value
    r.error("config.prompts.bad_value", line, f"`prompts.{key}` must be text", key=f"prompts.{key}")
    return None


def _flag(r: Reporter, value: object, line: int | None) -> bool | None:
    if isinstance(value, bool):
        return value
    message = "`prompts.ack_enabled` must be true or false"
    r.error("config.prompts.bad_value", line, message, key="prompts.ack_enabled")
    return None


def _examples(r: Reporter, value: object, line: int | None) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    message = "`prompts.ack_examples` must be a list of strings"
    r.error("config.prompts.bad_value", line, message, key="prompts.ack_examples")
    return None
