"""`agent.yml`: identity, persona, rules, prompt overrides and runtime settings (spec §1.2).

Pure: the input is what `keel.source.yaml.load_yaml` returned for the file. Unknown
keys are ignored as the spec says, but each one gets a warning so a typo is visible.
`parse_integrations` (integrations.yml) lives in `keel.project.integrations` and is
re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from keel.project.envvars import frozen_mapping
from keel.project.integrations import IntegrationsConfig, parse_integrations
from keel.project.offline_config import OfflineConfig, parse_offline
from keel.project.plan_cache_config import PlanCacheSettings, parse_plan_cache
from keel.project.prompts import Prompts, parse_prompts
from keel.project.references import (
    ChunkingConfig,
    ReferencesConfig,
    merge_references,
    parse_references,
)
from keel.source.diagnostics import Diagnostic
from keel.source.reporter import (
    Reporter,
    is_number,
    key_line,
    read_positive,
    read_positive_int,
    read_str,
    warn_unknown_keys,
)

DEFAULT_TOOL_TIMEOUT = 10.0
"""Seconds a local `@tool` call may take (spec §1.2)."""
DEFAULT_SESSION_EXPIRATION = 60.0
"""Minutes of inactivity after which a session expires."""
DEFAULT_MAX_TURNS = 10
"""Keel's global budget of model round trips per user message."""
DEFAULT_MAX_TOOL_CALLS_PER_REPLY = 16
"""Keel: tool calls of one model reply that may run; the rest are refused."""
DEFAULT_REPHRASE_TIMEOUT = 5.0
"""Keel: seconds a response rephrase call may take before the verbatim text is sent."""

TOP_LEVEL_KEYS = frozenset(
    {
        "agent",
        "name",
        "description",
        "rules",
        "prompts",
        "references",
        "conversation",
        "plan_cache",
        "tool_timeout",
        "rephrase_timeout",
        "session_config",
        "orchestrator",
        "max_turns",
        "max_tool_calls_per_reply",
        "routing",
        "extraction",
        "history",
    }
)
AGENT_KEYS = frozenset({"id", "language", "persona", "name", "description"})
NESTED_HONOURED_KEYS = frozenset({"rules", "references"})
"""Top-level keys that older Mantle builds also read under `agent:`; honoured there too."""
LEGACY_AGENT_KEYS = frozenset({"voice", "startup"})
SESSION_KEYS = frozenset({"session_expiration_time", "carry_over_slots_to_new_session"})
HISTORY_KEYS = frozenset({"tool_results"})


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionConfig:
    """`session_config`: session expiry (Rasa semantics)."""

    session_expiration_time: float = DEFAULT_SESSION_EXPIRATION
    """Minutes; 0 means sessions never expire."""
    carry_over_slots_to_new_session: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentConfig:
    """Everything `agent.yml` declares."""

    persona: str
    id: str | None = None
    """Assistant id; None when absent (the loader may generate one)."""
    language: str | None = None
    name: str | None = None
    description: str | None = None
    rules: tuple[str, ...] = ()
    prompts: Prompts = field(default_factory=Prompts)
    references: ReferencesConfig = field(default_factory=ReferencesConfig)
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    rephrase_timeout: float = DEFAULT_REPHRASE_TIMEOUT
    """Keel: seconds a rephrase call may take (`keel.loop.rephrase`); then the verbatim text."""
    session_config: SessionConfig = field(default_factory=SessionConfig)
    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_calls_per_reply: int = DEFAULT_MAX_TOOL_CALLS_PER_REPLY
    """Keel: tool calls of one model reply that run; the excess is refused, coded."""
    history_tool_results: bool | None = None
    """Keel: `history: {tool_results: ...}`, whether earlier turns' tool calls and results
    go into the model's history (None: not set; skills decide, `keel.loop.model_request`)."""
    offline: OfflineConfig = field(default_factory=OfflineConfig)
    """Keel: `routing.offline` and `extraction` (`keel.project.offline_config`)."""
    plan_cache: PlanCacheSettings = field(default_factory=PlanCacheSettings)
    """Keel: `plan_cache` (`keel.project.plan_cache_config`)."""
    conversation: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Accepted and kept as written; contents not specified."""
    orchestrator: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Accepted and kept as written; contents not specified."""
    legacy: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Legacy `agent.voice` / `agent.startup` blocks, kept as written."""


def parse_agent_config(
    data: Any, file: str = "agent.yml"
) -> tuple[AgentConfig | None, list[Diagnostic]]:
    """Parse `agent.yml`; the config is None exactly when an error was found."""
    r = Reporter(file)
    if data is None:
        r.error("config.agent.missing_section", None, "agent.yml needs an `agent:` section")
        return None, r.diagnostics
    if not isinstance(data, dict):
        r.error("config.agent.not_mapping", key_line(data, 0), "agent.yml must be a mapping")
        return None, r.diagnostics
    warn_unknown_keys(r, data, TOP_LEVEL_KEYS, "config.agent.unknown_key", where="")
    section = _agent_section(r, data)
    config = AgentConfig(
        persona=_persona(r, data, section),
        id=read_str(r, section, "id", "config.agent.bad_value", where="agent."),
        language=read_str(r, section, "language", "config.agent.bad_value", where="agent."),
        name=_display(r, data, section, "name"),
        description=_display(r, data, section, "description"),
        rules=_rules(r, data) if "rules" in data else _rules(r, section),
        prompts=parse_prompts(r, data.get("prompts"), key_line(data, "prompts")),
        references=_references(r, data, section),
        tool_timeout=read_positive(
            r, data, "tool_timeout", "config.agent.bad_tool_timeout", default=DEFAULT_TOOL_TIMEOUT
        ),
        rephrase_timeout=read_positive(
            r,
            data,
            "rephrase_timeout",
            "config.agent.bad_rephrase_timeout",
            default=DEFAULT_REPHRASE_TIMEOUT,
        ),
        session_config=_session(r, data),
        max_turns=_max_turns(r, data),
        max_tool_calls_per_reply=_max_tool_calls(r, data),
        history_tool_results=_history(r, data),
        offline=parse_offline(r, data),
        plan_cache=parse_plan_cache(r, data),
        conversation=_raw_section(r, data, "conversation"),
        orchestrator=_raw_section(r, data, "orchestrator"),
        legacy=frozen_mapping({k: v for k, v in section.items() if k in LEGACY_AGENT_KEYS}),
    )
    return (None if r.has_errors else config), r.diagnostics


def _agent_section(r: Reporter, data: Mapping[Any, Any]) -> Mapping[Any, Any]:
    section = data.get("agent")
    if section is None:
        r.error("config.agent.missing_section", key_line(data, "agent"), "missing `agent:` section")
        return {}
    if not isinstance(section, dict):
        r.error("config.agent.bad_value", key_line(data, "agent"), "`agent:` must be a mapping")
        return {}
    for key in section:
        line = key_line(section, key)
        if key in AGENT_KEYS:
            continue
        if key in NESTED_HONOURED_KEYS:
            _nested(r, data, key, line)
        elif key == "voice":
            message = (
                "`agent.voice` is a legacy key: the voice channels read it only when their "
                "integrations.yml block (`channels.twilio_media_streams`, `browser_audio`) "
                "names no `asr` or `tts`"
            )
            r.warning("config.agent.legacy_key", line, message, key=f"agent.{key}")
        elif key in LEGACY_AGENT_KEYS:
            message = f"`agent.{key}` is a legacy key; it is kept but not used"
            r.warning("config.agent.legacy_key", line, message, key=f"agent.{key}")
        elif key in TOP_LEVEL_KEYS:
            message = f"`{key}` belongs at the top level; nested under `agent:` it is ignored"
            r.warning("config.agent.misplaced_key", line, message, key=f"agent.{key}")
        else:
            message = f"unknown key `agent.{key}` is ignored"
            r.warning("config.agent.unknown_key", line, message, key=f"agent.{key}")
    return section


def _nested(r: Reporter, data: Mapping[Any, Any], key: str, line: int | None) -> None:
    """`agent.rules` / `agent.references`: honoured, with a note naming the newer place."""
    if key == "rules" and "rules" in data:
        message = "`agent.rules` is ignored: the top-level `rules` wins (keep one of the two)"
        r.warning("config.agent.shadowed_key", line, message, key="agent.rules")
        return
    message = (
        f"`agent.{key}` is honoured; its newer place is the top level (`{key}:` beside `agent:`)"
    )
    r.info("config.agent.nested_key", line, message, key=f"agent.{key}")


def _references(
    r: Reporter, data: Mapping[Any, Any], section: Mapping[Any, Any]
) -> ReferencesConfig:
    """Top-level `references` with `agent.references` filling the keys it does not set
    (per key, the top level wins; a key in both places is a warning)."""
    top = parse_references(r, data.get("references"), key_line(data, "references"))
    inner = section.get("references")
    if inner is None:
        return top
    nested = parse_references(r, inner, key_line(section, "references"))
    written = data.get("references")
    outer_keys = set(written) if isinstance(written, dict) else set()
    inner_keys = set(inner) if isinstance(inner, dict) else set()
    for key in sorted(outer_keys & inner_keys, key=str):
        message = f"`agent.references.{key}` is ignored: the top-level `references.{key}` wins"
        r.warning(
            "config.agent.shadowed_key",
            key_line(inner, key),
            message,
            key=f"agent.references.{key}",
        )
    return merge_references(top, nested, outer_keys)


def _persona(r: Reporter, data: Mapping[Any, Any], section: Mapping[Any, Any]) -> str:
    persona = section.get("persona")
    if isinstance(persona, str) and persona.strip():
        return persona
    if "agent" in data and isinstance(data.get("agent"), dict):
        line = key_line(section, "persona")
        r.error(
            "config.agent.missing_persona",
            line,
            "`agent.persona` is required and must be a non-empty string",
            key="agent.persona",
        )
    return ""


def _display(
    r: Reporter, data: Mapping[Any, Any], section: Mapping[Any, Any], key: str
) -> str | None:
    # Older examples nested name/description under `agent:`; the top level wins.
    top = read_str(r, data, key, "config.agent.bad_value")
    if top is not None or key in data:
        return top
    return read_str(r, section, key, "config.agent.bad_value", where="agent.")


def _rules(r: Reporter, data: Mapping[Any, Any]) -> tuple[str, ...]:
    rules = data.get("rules")
    if rules is None:
        return ()
    if not isinstance(rules, list):
        r.error("config.agent.bad_rules", key_line(data, "rules"), "`rules` must be a list")
        return ()
    kept: list[str] = []
    for index, item in enumerate(rules):
        if isinstance(item, str) and item.strip():
            kept.append(item)
            continue
        hint = " (quote it: an unquoted `: ` makes it a mapping)" if isinstance(item, dict) else ""
        message = f"rule {index + 1} must be a non-empty string{hint}"
        r.error("config.agent.bad_rules", key_line(rules, index), message, key="rules")
    return tuple(kept)


def _session(r: Reporter, data: Mapping[Any, Any]) -> SessionConfig:
    section = data.get("session_config")
    if section is None:
        return SessionConfig()
    code = "config.session.bad_value"
    if not isinstance(section, dict):
        r.error(code, key_line(data, "session_config"), "`session_config` must be a mapping")
        return SessionConfig()
    warn_unknown_keys(
        r, section, SESSION_KEYS, "config.session.unknown_key", where="session_config."
    )
    expiry = section.get("session_expiration_time", DEFAULT_SESSION_EXPIRATION)
    if not is_number(expiry) or expiry < 0:
        line = key_line(section, "session_expiration_time")
        r.error(code, line, "`session_config.session_expiration_time` must be minutes (>= 0)")
        expiry = DEFAULT_SESSION_EXPIRATION
    carry = section.get("carry_over_slots_to_new_session", True)
    if not isinstance(carry, bool):
        line = key_line(section, "carry_over_slots_to_new_session")
        r.error(code, line, "`session_config.carry_over_slots_to_new_session` must be true/false")
        carry = True
    return SessionConfig(
        session_expiration_time=float(expiry), carry_over_slots_to_new_session=carry
    )


def _max_turns(r: Reporter, data: Mapping[Any, Any]) -> int:
    value = read_positive_int(
        r, data, "max_turns", "config.agent.bad_max_turns", default=DEFAULT_MAX_TURNS
    )
    return DEFAULT_MAX_TURNS if value is None else value


def _max_tool_calls(r: Reporter, data: Mapping[Any, Any]) -> int:
    value = read_positive_int(
        r,
        data,
        "max_tool_calls_per_reply",
        "config.agent.bad_max_tool_calls_per_reply",
        default=DEFAULT_MAX_TOOL_CALLS_PER_REPLY,
    )
    return DEFAULT_MAX_TOOL_CALLS_PER_REPLY if value is None else value


def _history(r: Reporter, data: Mapping[Any, Any]) -> bool | None:
    """`history: {tool_results: true|false}`; None when not set."""
    section = data.get("history")
    if section is None:
        return None
    code = "config.agent.bad_value"
    if not isinstance(section, dict):
        r.error(code, key_line(data, "history"), "`history` must be a mapping")
        return None
    warn_unknown_keys(r, section, HISTORY_KEYS, "config.agent.unknown_key", where="history.")
    value = section.get("tool_results")
    if value is None or isinstance(value, bool):
        return value
    line = key_line(section, "tool_results")
    r.error(code, line, "`history.tool_results` must be true or false", key="history.tool_results")
    return None


def _raw_section(r: Reporter, data: Mapping[Any, Any], key: str) -> Mapping[str, object]:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        r.error("config.agent.bad_value", key_line(data, key), f"`{key}` must be a mapping")
    return frozen_mapping(value)


__all__ = [
    "DEFAULT_MAX_TOOL_CALLS_PER_REPLY",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_REPHRASE_TIMEOUT",
    "DEFAULT_SESSION_EXPIRATION",
    "DEFAULT_TOOL_TIMEOUT",
    "AgentConfig",
    "ChunkingConfig",
    "IntegrationsConfig",
    "Prompts",
    "ReferencesConfig",
    "SessionConfig",
    "parse_agent_config",
    "parse_integrations",
]
