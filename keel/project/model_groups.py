"""`model_groups:` in integrations.yml: named lists of concrete models; `escalation:` rules.

`escalation:` (a Keel extension) says when an acting call is raised to the `reasoning`
tier (see `keel.llm.tiers.choose_tier`); every key is optional:

    escalation:
      reasoning_skills: [plan_trip, dispute_charge]   # these skills always reason
      long_input_chars: 4000     # a user message longer than this many characters
      attachments: 2             # at least this many attachments on the message
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from keel.project.envvars import ENV_NAME, Expander, Secret
from keel.project.model_params import ModelParams, parse_params
from keel.source.reporter import (
    Reporter,
    is_number,
    key_line,
    read_positive_int,
    warn_unknown_keys,
)

MODEL_KEYS = frozenset(
    {
        "provider",
        "model",
        "api_base",
        "api_key_env",
        "api_key",
        "reasoning_effort",
        "input_cost_per_token",
        "output_cost_per_token",
        "cached_input_cost_per_token",
        "cache_write_cost_per_token",
    }
)
GROUP_KEYS = frozenset({"id", "models"})
ESCALATION_KEYS = frozenset({"reasoning_skills", "long_input_chars", "attachments"})


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """One concrete model of a group."""

    provider: str
    model: str
    line: int | None
    api_base: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key."""
    api_key: Secret | None = None
    """The key: from `api_key: ${VAR}`, or read from `api_key_env` when given."""
    reasoning_effort: str | None = None
    input_cost_per_token: float | None = None
    output_cost_per_token: float | None = None
    cached_input_cost_per_token: float | None = None
    """Price of a prompt token read from the provider's cache (`keel.llm.usage.cost_of`)."""
    cache_write_cost_per_token: float | None = None
    """Price of a prompt token written to the provider's cache (Anthropic)."""
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Other keys (provider-specific), `${VAR}`-expanded; hidden from repr."""
    params: ModelParams = field(default_factory=ModelParams)
    """Request parameters sent with every request (`keel.project.model_params`)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelGroup:
    """A named group of models (the first is the primary, the rest fallbacks)."""

    id: str
    models: tuple[ModelSpec, ...]
    line: int | None
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}), repr=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class EscalationRules:
    """`escalation:`: when an acting call is raised to the `reasoning` tier.

    A call escalates when its skill is in `reasoning_skills`, when the user's text is longer
    than `long_input_chars` characters, or when it carries at least `attachments`
    attachments. A rule left out (None / empty) never fires.
    """

    reasoning_skills: frozenset[str] = frozenset()
    long_input_chars: int | None = None
    attachments: int | None = None

    @property
    def empty(self) -> bool:
        """True when no rule is configured (nothing ever escalates)."""
        return (
            not self.reasoning_skills and self.long_input_chars is None and self.attachments is None
        )


def parse_escalation(
    r: Reporter, data: Any, line: int | None, *, reasoning_tier: bool
) -> EscalationRules:
    """Read `escalation:`; bad values are `config.escalation.bad_value` errors.

    `reasoning_tier` says whether `tiers.reasoning` is mapped: rules without it are legal
    (escalated calls fall back to the default group) but almost surely a slip, so warned.
    """
    if data is None:
        return EscalationRules()
    code = "config.escalation.bad_value"
    if not isinstance(data, dict):
        r.error(code, line, "`escalation` must be a mapping of rules", key="escalation")
        return EscalationRules()
    warn_unknown_keys(
        r, data, ESCALATION_KEYS, "config.escalation.unknown_key", where="escalation."
    )
    rules = EscalationRules(
        reasoning_skills=_skill_ids(r, data),
        long_input_chars=read_positive_int(
            r, data, "long_input_chars", code, default=None, where="escalation."
        ),
        attachments=read_positive_int(
            r, data, "attachments", code, default=None, where="escalation."
        ),
    )
    if not rules.empty and not reasoning_tier:
        message = (
            "`escalation` raises calls to the reasoning tier, but `tiers.reasoning` is not "
            "mapped; escalated calls use the default group"
        )
        r.warning("config.escalation.no_reasoning_tier", line, message, key="tiers.reasoning")
    return rules


def _skill_ids(r: Reporter, data: dict[Any, Any]) -> frozenset[str]:
    value = data.get("reasoning_skills")
    if value is None:
        return frozenset()
    where = "escalation.reasoning_skills"
    if not isinstance(value, list):
        message = f"`{where}` must be a list of skill ids"
        r.error("config.escalation.bad_value", key_line(data, "reasoning_skills"), message)
        return frozenset()
    found: set[str] = set()
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            found.add(item.strip())
            continue
        message = f"`{where}[{index}]` must be a skill id, got {item!r}"
        r.error("config.escalation.bad_value", key_line(value, index), message, key=where)
    return frozenset(found)


def parse_model_groups(
    r: Reporter, data: Any, line: int | None, x: Expander
) -> tuple[list[ModelGroup], set[str]]:
    """Read `model_groups`; duplicate ids and groups without models are errors.

    Returns the valid groups and every declared id (broken groups included, so names
    pointing at a broken group are not reported a second time as unknown).
    """
    if data is None:
        return [], set()
    if not isinstance(data, list):
        r.error("config.model_groups.bad_value", line, "`model_groups` must be a list")
        return [], set()
    groups: list[ModelGroup] = []
    seen: set[str] = set()
    for index, item in enumerate(data):
        group_id = item.get("id") if isinstance(item, dict) else None
        if isinstance(group_id, str) and group_id in seen:
            message = f"model group `{group_id}` is declared twice"
            at = key_line(data, index)
            r.error("config.model_groups.duplicate_id", at, message, key=group_id)
            continue
        group = _group(r, item, key_line(data, index), x)
        if isinstance(group_id, str) and group_id:
            seen.add(group_id)
        if group is not None:
            groups.append(group)
    return groups, seen


def _group(r: Reporter, item: Any, line: int | None, x: Expander) -> ModelGroup | None:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        r.error("config.model_groups.missing_id", line, "each model group needs a string `id`")
        return None
    group_id: str = item["id"]
    where = f"model_groups.{group_id}."
    warn_unknown_keys(r, item, GROUP_KEYS, "config.model_groups.unknown_key", where=where)
    models = item.get("models")
    if not isinstance(models, list) or not models:
        message = f"model group `{group_id}` needs a non-empty `models` list"
        r.error("config.model_groups.missing_models", key_line(item, "models"), message)
        return None
    specs = [
        parse_model(r, m, key_line(models, i), x, f"{where}models[{i}]")
        for i, m in enumerate(models)
    ]
    if any(s is None for s in specs):
        return None
    extra = {k: v for k, v in item.items() if k not in GROUP_KEYS}
    return ModelGroup(
        id=group_id,
        models=tuple(s for s in specs if s is not None),
        line=line,
        extra=_expanded(x, extra, line, where),
    )


def parse_model(
    r: Reporter, item: Any, line: int | None, x: Expander, where: str
) -> ModelSpec | None:
    """Read one model entry (also used for a legacy inline `llm:`)."""
    code = "config.model_groups.bad_model"
    if not isinstance(item, dict):
        r.error(code, line, f"`{where}` must be a mapping with `provider` and `model`")
        return None
    missing = [k for k in ("provider", "model") if not isinstance(item.get(k), str) or not item[k]]
    if missing:
        r.error(code, line, f"`{where}` needs a string `{missing[0]}`", key=where)
        return None
    text = _texts(r, item, where, x)
    key_env = _key_env(r, item, where)
    costs = _costs(r, item, where)
    extra = _expanded(x, {k: v for k, v in item.items() if k not in MODEL_KEYS}, line, where)
    return ModelSpec(
        provider=x.text(item["provider"], line=line, key=f"{where}.provider"),
        model=x.text(item["model"], line=line, key=f"{where}.model"),
        line=line,
        api_base=text.get("api_base"),
        api_key_env=key_env,
        api_key=_api_key(r, item, where, x, key_env),
        reasoning_effort=text.get("reasoning_effort"),
        input_cost_per_token=costs.get("input_cost_per_token"),
        output_cost_per_token=costs.get("output_cost_per_token"),
        cached_input_cost_per_token=costs.get("cached_input_cost_per_token"),
        cache_write_cost_per_token=costs.get("cache_write_cost_per_token"),
        extra=extra,
        params=parse_params(r, item, extra, where),
    )


def _texts(r: Reporter, item: dict[Any, Any], where: str, x: Expander) -> dict[str, str]:
    found: dict[str, str] = {}
    for key in ("api_base", "reasoning_effort"):
        value = item.get(key)
        if value is None:
            continue
        line = key_line(item, key)
        if not isinstance(value, str) or not value:
            r.error("config.model_groups.bad_model", line, f"`{where}.{key}` must be a string")
            continue
        found[key] = x.text(value, line=line, key=f"{where}.{key}")
    return found


_COST_KEYS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cached_input_cost_per_token",
    "cache_write_cost_per_token",
)


def _costs(r: Reporter, item: dict[Any, Any], where: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for key in _COST_KEYS:
        value = item.get(key)
        if value is None:
            continue
        if not is_number(value) or value < 0:
            message = f"`{where}.{key}` must be a number >= 0"
            r.error("config.model_groups.bad_model", key_line(item, key), message)
            continue
        found[key] = float(value)
    return found


def _key_env(r: Reporter, item: dict[Any, Any], where: str) -> str | None:
    key_env = item.get("api_key_env")
    if key_env is None:
        return None
    if isinstance(key_env, str) and ENV_NAME.fullmatch(key_env):
        return key_env
    # The value is not shown: a key pasted here instead of a variable name is common.
    message = f"`{where}.api_key_env` must name an environment variable (A-Z, 0-9, _)"
    r.error("config.model_groups.bad_model", key_line(item, "api_key_env"), message)
    return None


def _api_key(
    r: Reporter, item: dict[Any, Any], where: str, x: Expander, key_env: str | None
) -> Secret | None:
    value = item.get("api_key")
    if value is None:
        if key_env is None:
            return None
        # `api_key_env: NAME` means the same as `api_key: ${NAME}`.
        line = key_line(item, "api_key_env")
        return x.variable(key_env, line=line, key=f"{where}.api_key_env")
    line = key_line(item, "api_key")
    if not isinstance(value, str):
        r.error("config.model_groups.bad_model", line, f"`{where}.api_key` must be a string")
        return None
    secret = x.secret(value, line=line, key=f"{where}.api_key")
    if secret.literal:
        message = f"`{where}.api_key` is written literally; use `${{VAR}}` or `api_key_env`"
        r.warning("config.model_groups.literal_secret", line, message, key=f"{where}.api_key")
    return secret


def _expanded(
    x: Expander, extra: dict[Any, Any], line: int | None, where: str
) -> Mapping[str, Any]:
    return x.mapping(extra, line=line, key=where.rstrip("."))
