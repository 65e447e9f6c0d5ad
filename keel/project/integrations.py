"""`integrations.yml`: models, model tiers, channels and MCP servers (spec §1.3).

Pure: the input is what `load_yaml` returned and the environment as a mapping. `${VAR}`
is expanded in `model_groups`, `channels`, `mcp_servers` and the other service blocks;
an unset variable is a `config.env.unset` warning (the deployment may still set it),
recorded in `IntegrationsConfig.unset_env`. Credentials are `Secret`s, and the raw blocks
that may hold credentials are hidden from `repr()`.

Model tiers are a Keel extension: `tiers: {router|default|reasoning: <group id>}`. A tier
that is not mapped falls back to `default`, and `default` falls back to `llm.model_group`.
`escalation: {reasoning_skills, long_input_chars, attachments}` says when an acting call
is raised to the `reasoning` tier (`keel.project.model_groups.EscalationRules`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from keel.project.envvars import Expander, UnsetVar
from keel.project.mcp_servers import McpAuth, McpServerConfig, parse_mcp_servers
from keel.project.model_groups import (
    MODEL_KEYS,
    EscalationRules,
    ModelGroup,
    ModelSpec,
    parse_escalation,
    parse_model,
    parse_model_groups,
)
from keel.source.diagnostics import Diagnostic
from keel.source.reporter import Reporter, key_line, read_positive_int

Tier = Literal["router", "default", "reasoning"]
TIERS: tuple[Tier, ...] = ("router", "default", "reasoning")
LEGACY_GROUP_ID = "llm"
"""Id of the implicit group made from a legacy inline `llm: {provider, model, ...}`."""
SERVICE_KEYS = ("tracing", "tracker_store", "event_broker", "knowledge_stores")
TOP_LEVEL_KEYS = frozenset(
    {"llm", "model_groups", "tiers", "escalation", "channels", "mcp_servers", *SERVICE_KEYS}
)
LLM_KEYS = frozenset({"model_group", "max_prompt_tokens"})
NOT_USED: Mapping[str, str] = {
    "tracing": "Keel sends no traces to Langfuse or elsewhere; every turn is in its event log "
    "(`GET /v1/conversations/{id}/events`, `keel replay`)",
    "tracker_store": "Keel keeps every conversation in its own event store "
    "(`keel run --database-url`, `KEEL_DATABASE_URL`); the tracker store is not used",
    "event_broker": "Keel publishes no events to a broker; read the event log through the API "
    "and its live feed instead",
    "knowledge_stores": "Keel answers from its own knowledge index (references/**/*.md); "
    "knowledge stores are not queried",
}
"""Service blocks Mantle parses but does not consume: what Keel does instead."""


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, kw_only=True, slots=True)
class LlmConfig:
    """`llm`: which model group drives the orchestrator."""

    model_group: str
    line: int | None = None
    max_prompt_tokens: int | None = None
    legacy_inline: bool = False
    """True when the group was made from a legacy inline `llm: {provider, model}`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class IntegrationsConfig:
    """Everything `integrations.yml` declares."""

    llm: LlmConfig
    model_groups: tuple[ModelGroup, ...] = ()
    tiers: Mapping[str, str] = field(default_factory=_empty)
    """Explicitly mapped tiers only; use `group_for_tier` to resolve with fallbacks."""
    escalation: EscalationRules = field(default_factory=EscalationRules)
    """When acting calls are raised to the `reasoning` tier."""
    channels: Mapping[str, Mapping[str, object]] = field(default_factory=_empty, repr=False)
    mcp_servers: tuple[McpServerConfig, ...] = ()
    services: Mapping[str, Mapping[str, object]] = field(default_factory=_empty, repr=False)
    """`tracing`, `tracker_store`, `event_broker`, `knowledge_stores`, as written."""
    unset_env: tuple[UnsetVar, ...] = ()

    def group(self, group_id: str) -> ModelGroup | None:
        """The model group with this id, if declared."""
        return next((g for g in self.model_groups if g.id == group_id), None)

    def group_for_tier(self, tier: Tier) -> str:
        """Group id for `tier`: its mapping, else the `default` tier, else `llm.model_group`."""
        return self.tiers.get(tier) or self.tiers.get("default") or self.llm.model_group

    def mcp_server(self, name: str) -> McpServerConfig | None:
        """The MCP server with this name, if declared."""
        return next((s for s in self.mcp_servers if s.name == name), None)


def parse_integrations(
    data: Any, file: str = "integrations.yml", *, env: Mapping[str, str]
) -> tuple[IntegrationsConfig | None, list[Diagnostic]]:
    """Parse `integrations.yml`; the config is None exactly when an error was found."""
    r = Reporter(file)
    x = Expander(file, env)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        message = "integrations.yml must be a mapping of sections"
        r.error("config.integrations.not_mapping", key_line(data, 0), message)
        return None, r.diagnostics
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            message = f"unknown key `{key}` is ignored"
            line = key_line(data, key)
            r.warning("config.integrations.unknown_key", line, message, key=str(key))
    groups, ids = parse_model_groups(r, data.get("model_groups"), key_line(data, "model_groups"), x)
    llm = _llm(r, data, x, groups, ids)
    # A malformed `model_groups` is already reported; do not call every use of it unknown.
    known = None if not isinstance(data.get("model_groups"), list | None) else ids
    tiers = _tiers(r, data, known)
    llm = _resolve_llm(r, data, llm, tiers, known)
    escalation = _escalation(r, data, tiers)
    channels = _channels(r, data, x)
    servers = parse_mcp_servers(r, data.get("mcp_servers"), key_line(data, "mcp_servers"), x)
    services = _services(r, data, x)
    _warn_unset(r, x)
    if llm is None or r.has_errors:
        return None, r.diagnostics
    config = IntegrationsConfig(
        llm=llm,
        model_groups=tuple(groups),
        tiers=MappingProxyType(tiers),
        escalation=escalation,
        channels=channels,
        mcp_servers=tuple(servers),
        services=services,
        unset_env=tuple(x.unset),
    )
    return config, r.diagnostics


def _llm(
    r: Reporter, data: dict[Any, Any], x: Expander, groups: list[ModelGroup], ids: set[str]
) -> LlmConfig | None:
    llm = data.get("llm")
    line = key_line(data, "llm")
    if llm is None:
        return None
    if not isinstance(llm, dict):
        r.error("config.llm.bad_value", line, "`llm` must be a mapping")
        return None
    max_tokens = read_positive_int(
        r, llm, "max_prompt_tokens", "config.llm.bad_value", default=None, where="llm."
    )
    if "model_group" not in llm and ("provider" in llm or "model" in llm):
        return _legacy_llm(r, llm, line, x, (groups, ids), max_tokens)
    for key in llm:
        if key in MODEL_KEYS:
            message = f"`llm.{key}` belongs in a model group; `llm` only names `model_group`"
            r.error("config.llm.inline_provider", key_line(llm, key), message, key=f"llm.{key}")
        elif key not in LLM_KEYS:
            message = f"unknown key `llm.{key}` (allowed: model_group, max_prompt_tokens)"
            r.error("config.llm.unknown_key", key_line(llm, key), message, key=f"llm.{key}")
    group = llm.get("model_group")
    if not isinstance(group, str) or not group:
        message = "`llm.model_group` must name a model group"
        r.error("config.llm.missing_model_group", key_line(llm, "model_group"), message)
        return None
    at = key_line(llm, "model_group")
    return LlmConfig(model_group=group, line=at, max_prompt_tokens=max_tokens)


def _legacy_llm(
    r: Reporter,
    llm: dict[Any, Any],
    line: int | None,
    x: Expander,
    declared: tuple[list[ModelGroup], set[str]],
    max_tokens: int | None,
) -> LlmConfig | None:
    message = "inline `llm: {provider, model}` is legacy; declare a model group and name it"
    r.warning("config.llm.legacy_inline", line, message, key="llm")
    # The mapping itself, not a copy, so parameter errors keep their lines;
    # `max_prompt_tokens` is one of model_params.CLIENT_KEYS (never sent).
    spec: ModelSpec | None = parse_model(r, llm, line, x, "llm")
    if spec is None:
        return None
    groups, ids = declared
    if LEGACY_GROUP_ID in ids:
        message = f"model group `{LEGACY_GROUP_ID}` clashes with the group made from inline `llm`"
        r.error("config.model_groups.duplicate_id", line, message, key=LEGACY_GROUP_ID)
        return None
    groups.append(ModelGroup(id=LEGACY_GROUP_ID, models=(spec,), line=line))
    ids.add(LEGACY_GROUP_ID)
    return LlmConfig(
        model_group=LEGACY_GROUP_ID, line=line, max_prompt_tokens=max_tokens, legacy_inline=True
    )


def _tiers(r: Reporter, data: dict[Any, Any], ids: set[str] | None) -> dict[str, str]:
    tiers = data.get("tiers")
    if tiers is None:
        return {}
    if not isinstance(tiers, dict):
        r.error("config.tiers.bad_value", key_line(data, "tiers"), "`tiers` must be a mapping")
        return {}
    found: dict[str, str] = {}
    for tier, group in tiers.items():
        line = key_line(tiers, tier)
        if tier not in TIERS:
            message = f"unknown tier `{tier}` (tiers are router, default, reasoning)"
            r.error("config.tiers.unknown_tier", line, message, key=str(tier))
        elif not isinstance(group, str) or not group:
            r.error("config.tiers.bad_value", line, f"tier `{tier}` must name a model group")
        elif ids is not None and group not in ids:
            message = f"tier `{tier}` names model group `{group}`, which is not declared"
            r.error("config.tiers.unknown_group", line, message, key=group)
        else:
            found[tier] = group
    return found


def _escalation(r: Reporter, data: dict[Any, Any], tiers: dict[str, str]) -> EscalationRules:
    line = key_line(data, "escalation")
    value = data.get("escalation")
    return parse_escalation(r, value, line, reasoning_tier="reasoning" in tiers)


def _resolve_llm(
    r: Reporter,
    data: dict[Any, Any],
    llm: LlmConfig | None,
    tiers: dict[str, str],
    ids: set[str] | None,
) -> LlmConfig | None:
    if llm is None:
        if data.get("llm") is None and "default" in tiers:
            return LlmConfig(model_group=tiers["default"], line=key_line(data, "tiers"))
        if data.get("llm") is None:
            message = "integrations.yml needs `llm: {model_group: <id>}` (or `tiers.default`)"
            line = key_line(data, "llm") if "llm" in data else None
            r.error("config.llm.missing_section", line, message, key="llm")
        return None
    if ids is not None and llm.model_group not in ids:
        message = f"`llm.model_group` names `{llm.model_group}`, which is not a declared group"
        r.error("config.model_groups.unknown_group", llm.line, message, key=llm.model_group)
        return None
    default = tiers.get("default")
    if default is not None and default != llm.model_group:
        message = (
            f"`tiers.default` ({default}) differs from `llm.model_group` ({llm.model_group}); "
            "skills on the default tier use tiers.default"
        )
        r.warning("config.tiers.default_conflict", llm.line, message, key="tiers.default")
    return llm


def _channels(r: Reporter, data: dict[Any, Any], x: Expander) -> Mapping[str, Mapping[str, object]]:
    channels = data.get("channels")
    if channels is None:
        return MappingProxyType({})
    if not isinstance(channels, dict):
        message = "`channels` must map channel names to settings"
        r.error("config.channels.bad_value", key_line(data, "channels"), message)
        return MappingProxyType({})
    found: dict[str, Mapping[str, object]] = {}
    for name, settings in channels.items():
        line = key_line(channels, name)
        if settings is not None and not isinstance(settings, dict):
            message = f"channel `{name}` needs a mapping of settings (e.g. `{{enabled: true}}`)"
            r.error("config.channels.bad_value", line, message, key=str(name))
            continue
        found[str(name)] = x.mapping(settings, line=line, key=f"channels.{name}")
    return MappingProxyType(found)


def _services(r: Reporter, data: dict[Any, Any], x: Expander) -> Mapping[str, Mapping[str, object]]:
    found: dict[str, Mapping[str, object]] = {}
    for key in SERVICE_KEYS:
        value = data.get(key)
        if value is None:
            continue
        line = key_line(data, key)
        if not isinstance(value, dict):
            r.error("config.integrations.bad_value", line, f"`{key}` must be a mapping", key=key)
            continue
        message = f"`{key}` is kept but not used: {NOT_USED[key]}"
        r.warning("config.integrations.not_used", line, message, key=key)
        found[key] = x.mapping(value, line=line, key=key)
    return MappingProxyType(found)


def _warn_unset(r: Reporter, x: Expander) -> None:
    for unset in x.unset:
        message = f"${{{unset.name}}} is not set; `{unset.key}` is empty until it is"
        r.warning("config.env.unset", unset.line, message, key=unset.name)


__all__ = [
    "LEGACY_GROUP_ID",
    "TIERS",
    "EscalationRules",
    "IntegrationsConfig",
    "LlmConfig",
    "McpAuth",
    "McpServerConfig",
    "ModelGroup",
    "ModelSpec",
    "Tier",
    "parse_integrations",
]
