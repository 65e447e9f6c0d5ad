"""Model tiers: which tier a call uses, and which model group a tier resolves to.

Pure: no IO, no clock. A tier is a class of model (`router`: cheap classification,
`default`: ordinary skill execution, `reasoning`: reasoning-heavy work); `integrations.yml`
maps tiers to model groups (`tiers:`), and the tier resolves to concrete models at request
time, so swapping models is a one-line change there (ARCHITECTURE §2).

Choosing a tier (`choose_tier`):

* a routing call (`purpose="route"`) uses `router` when a router group is mapped, else
  `default`; escalation does not apply to routing;
* an acting call (`purpose="act"`) uses the skill's declared `tier:`, else `default`;
* escalation (`escalation:` in integrations.yml, `EscalationRules`) then raises an acting
  call to `reasoning` when the skill is listed in `reasoning_skills`, when the user's text
  is longer than `long_input_chars` characters, or when it carries at least `attachments`
  attachments (checked in that order; the first rule that fires is named in the reason).
  Escalation only raises: a call already on `reasoning` stays there.

Resolving a tier (`resolve`): its mapped group, else the `default` tier's group, else
`llm.model_group` (the same chain as `IntegrationsConfig.group_for_tier`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from keel.llm.errors import ModelConfigError
from keel.project.integrations import TIERS, IntegrationsConfig
from keel.project.model_groups import EscalationRules, ModelGroup

Purpose = Literal["route", "act"]
"""What a model call is for: choosing a skill (`route`) or running one (`act`)."""

EscalationRule = Literal["reasoning_skills", "long_input_chars", "attachments"]
"""The `escalation:` key that raised a call to `reasoning`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class TierChoice:
    """The tier a call uses and why (`reason` is for people: events, logs, the inspector)."""

    tier: str
    reason: str
    rule: EscalationRule | None = None
    """The escalation rule that raised the tier, when one did."""


def has_router(integrations: IntegrationsConfig) -> bool:
    """True when `tiers.router` is mapped to a group (routing then uses the router tier)."""
    return "router" in integrations.tiers


def choose_tier(
    *,
    purpose: Purpose,
    skill_id: str | None,
    skill_tier: str | None,
    user_text: str,
    attachments: int,
    rules: EscalationRules,
    router_configured: bool = False,
) -> TierChoice:
    """The tier of one model call (see the module docstring for the rules)."""
    if purpose == "route":
        if router_configured:
            return TierChoice(tier="router", reason="routing uses the router tier")
        return TierChoice(tier="default", reason="routing uses the default tier (no router group)")
    if skill_tier:
        base = TierChoice(
            tier=skill_tier, reason=f"skill `{skill_id}` declares tier `{skill_tier}`"
        )
    else:
        base = TierChoice(tier="default", reason="the default tier (no tier declared)")
    if base.tier == "reasoning":
        return base
    escalated = escalate(
        skill_id=skill_id, user_text=user_text, attachments=attachments, rules=rules
    )
    return escalated or base


def escalate(
    *, skill_id: str | None, user_text: str, attachments: int, rules: EscalationRules
) -> TierChoice | None:
    """The `reasoning` choice when an escalation rule fires, else None."""
    if skill_id is not None and skill_id in rules.reasoning_skills:
        reason = f"escalated: skill `{skill_id}` is listed in escalation.reasoning_skills"
        return TierChoice(tier="reasoning", reason=reason, rule="reasoning_skills")
    limit = rules.long_input_chars
    if limit is not None and len(user_text) > limit:
        reason = (
            f"escalated: input of {len(user_text)} characters is longer than "
            f"escalation.long_input_chars ({limit})"
        )
        return TierChoice(tier="reasoning", reason=reason, rule="long_input_chars")
    least = rules.attachments
    if least is not None and attachments >= least:
        reason = f"escalated: {attachments} attachment(s) reach escalation.attachments ({least})"
        return TierChoice(tier="reasoning", reason=reason, rule="attachments")
    return None


def group_id_for(integrations: IntegrationsConfig, tier: str) -> str:
    """The group id `tier` resolves to: its mapping, else `default`'s, else `llm.model_group`."""
    tiers = integrations.tiers
    return tiers.get(tier) or tiers.get("default") or integrations.llm.model_group


def resolve(integrations: IntegrationsConfig, tier: str) -> ModelGroup:
    """The model group `tier` resolves to; raises `ModelConfigError` if it is not declared.

    A validated project never raises here (the loader reports unknown groups); the error
    guards configurations built by hand.
    """
    group_id = group_id_for(integrations, tier)
    group = integrations.group(group_id)
    if group is None:
        message = f"tier `{tier}` resolves to model group `{group_id}`, which is not declared"
        raise ModelConfigError(message, group=group_id)
    return group


def model_ids(integrations: IntegrationsConfig, tier: str) -> tuple[str, ...]:
    """The concrete model ids `tier` resolves to: the primary first, then its fallbacks."""
    return tuple(spec.model for spec in resolve(integrations, tier).models)


__all__ = [
    "TIERS",
    "EscalationRule",
    "EscalationRules",
    "Purpose",
    "TierChoice",
    "choose_tier",
    "escalate",
    "group_id_for",
    "has_router",
    "model_ids",
    "resolve",
]
