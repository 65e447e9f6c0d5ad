"""Feedback rules for the plan cache (plan-cache spec §3.12): promotion, demotion, anti-entries.

Every signal on a turn (`approve`, `reject`, `repeat`, `implicit_ok`, `implicit_fail`) is
evidence about one (intent signature, plan shape) (`keel.plans.evidence`: a Beta posterior of
success): explicit signals weigh 1, implicit ones `implicit_weight` (0.3). The rules, all
pure and returning new rows rather than changing any:

* promotion to an L1 champion: the Wilson lower bound of success ≥ 0.90 with weighted
  n ≥ 3, or one explicit approve for a read-only template; an effectful template needs at
  least one explicit approve as well, and never enters as a shadow;
* demotion: posterior mean < 0.6 after n ≥ 3, or an explicit reject on an effectful
  template, on the entry that served the turn, or on a shadow; a demotion writes an
  anti-entry (TTL 30 days); a later explicit approve lifts it and re-activates the entry
  (last writer wins);
* `repeat` writes a one-hour anti-entry and demotes nothing;
* the champion of an intent (`keel.plans.evidence.champion`) is the servable entry with the
  highest lower bound, then the most recent.

`FeedbackRules.metnos()` gives Metnos's published rules for side-by-side benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from keel.plans.evidence import NEGATIVE, POSITIVE, Evidence
from keel.plans.store_port import AntiEntry, TemplateRow

DAY: Final = 86_400.0


@dataclass(frozen=True, kw_only=True, slots=True)
class FeedbackRules:
    """The knobs of promotion and demotion (spec defaults)."""

    implicit_weight: float = 0.3
    confidence_z: float = 1.645
    """z of the one-sided 95 % Wilson lower bound."""
    promote_lower_bound: float = 0.90
    promote_min_n: float = 3.0
    read_only_single_approve: bool = True
    effectful_needs_approve: bool = True
    promote_on_approvals: int | None = None
    """Metnos `MIN_OBS`: this many approvals promote any template (None: off)."""
    shadow_seeding: bool = False
    shadow_min_steps: int = 4
    shadow_min_repeat: int = 2
    shadow_effectful: bool = False
    demote_below_mean: float | None = 0.6
    demote_min_n: float = 3.0
    demote_effectful_on_reject: bool = True
    demote_serving_on_reject: bool = True
    demote_shadow_on_reject: bool = True
    demote_after_rejects: int | None = None
    """Metnos: this many rejects over all history demote (None: off)."""
    anti_ttl: float = 30 * DAY
    repeat_ttl: float = 3600.0
    approve_lifts_anti: bool = True

    @classmethod
    def metnos(cls) -> FeedbackRules:
        """Metnos's defaults (spec §1.6, §1.14): promotion on one approve for any template,
        shadow seeding after 4 steps / 2 observations (effectful too), demotion only at 3
        rejects counted over all history."""
        return cls(
            promote_on_approvals=1,
            effectful_needs_approve=False,
            shadow_seeding=True,
            shadow_effectful=True,
            demote_below_mean=None,
            demote_effectful_on_reject=False,
            demote_serving_on_reject=False,
            demote_shadow_on_reject=False,
            demote_after_rejects=3,
        )


def signal_weight(signal: str, rules: FeedbackRules) -> float:
    """The weight of a signal in the posterior (0 for `repeat` and unknown signals)."""
    if signal in ("approve", "reject"):
        return 1.0
    if signal in ("implicit_ok", "implicit_fail"):
        return rules.implicit_weight
    return 0.0


def promotable(evidence: Evidence, *, effectful: bool, rules: FeedbackRules) -> bool:
    """Whether evidence makes a template an active champion."""
    if effectful and rules.effectful_needs_approve and evidence.approvals < 1:
        return False
    if rules.promote_on_approvals is not None:
        return evidence.approvals >= rules.promote_on_approvals
    if _mean_too_low(evidence, rules):
        return False
    if not effectful and rules.read_only_single_approve and evidence.approvals >= 1:
        return True
    return (
        evidence.n >= rules.promote_min_n
        and evidence.lower(rules.confidence_z) >= rules.promote_lower_bound
    )


def _mean_too_low(evidence: Evidence, rules: FeedbackRules) -> bool:
    return (
        rules.demote_below_mean is not None
        and evidence.n >= rules.demote_min_n
        and evidence.mean < rules.demote_below_mean
    )


def demotes(
    signal: str,
    evidence: Evidence,
    *,
    effectful: bool,
    serving: bool,
    shadow: bool,
    rules: FeedbackRules,
) -> bool:
    """Whether a negative signal (already counted in `evidence`) demotes the template."""
    if signal not in NEGATIVE:
        return False
    if signal == "reject" and (
        (effectful and rules.demote_effectful_on_reject)
        or (serving and rules.demote_serving_on_reject)
        or (shadow and rules.demote_shadow_on_reject)
    ):
        return True
    if rules.demote_after_rejects is not None and evidence.rejects >= rules.demote_after_rejects:
        return True
    return _mean_too_low(evidence, rules)


def shadow_seedable(
    *,
    steps: int,
    intent_observations: int,
    has_champion: bool,
    effectful: bool,
    rules: FeedbackRules,
) -> bool:
    """Metnos's shadow seeding: a long plan for an intent seen often enough, no champion."""
    return (
        rules.shadow_seeding
        and (rules.shadow_effectful or not effectful)
        and not has_champion
        and steps >= rules.shadow_min_steps
        and intent_observations >= rules.shadow_min_repeat
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class Judgement:
    """What one signal changes: rows and anti-entries to write, and a short description."""

    row: TemplateRow | None = None
    anti: AntiEntry | None = None
    lift_anti: bool = False
    change: str = "none"


def judge(
    signal: str,
    *,
    evidence: Evidence,
    existing: TemplateRow | None,
    candidate: TemplateRow | None,
    serving: bool,
    scope: str,
    intent_sig: str,
    shape_hash: str,
    now: float,
    rules: FeedbackRules,
) -> Judgement:
    """Apply one signal to an (intent, shape): `evidence` already includes it; `existing` is
    its L1 entry, `candidate` the entry to create on promotion; `serving` says the entry
    served the turn."""
    if signal in POSITIVE:
        return _positive(signal, evidence, existing, candidate, rules)
    if signal == "repeat":
        ttl, reason = rules.repeat_ttl, "repeat"
    elif signal in NEGATIVE and _demoted(signal, evidence, existing, candidate, serving, rules):
        ttl, reason = rules.anti_ttl, signal
    elif signal in NEGATIVE:
        return _updated(existing, evidence)
    else:
        return Judgement()
    anti = AntiEntry(
        scope=scope,
        intent_sig=intent_sig,
        shape_hash=shape_hash,
        weight=1.0,
        expires_at=now + ttl,
        reason=reason,
    )
    if reason == "repeat":
        return Judgement(anti=anti, change="anti_repeat")
    row = None
    if existing is not None:
        row = replace(
            existing, status="demoted", alpha=evidence.alpha, beta=evidence.beta, last_served_at=now
        )
    return Judgement(row=row, anti=anti, change="demoted")


def _demoted(
    signal: str,
    evidence: Evidence,
    existing: TemplateRow | None,
    candidate: TemplateRow | None,
    serving: bool,
    rules: FeedbackRules,
) -> bool:
    subject = existing or candidate
    return demotes(
        signal,
        evidence,
        effectful=subject.effectful if subject is not None else False,
        serving=serving,
        shadow=existing is not None and existing.status == "shadow",
        rules=rules,
    )


def _positive(
    signal: str,
    evidence: Evidence,
    existing: TemplateRow | None,
    candidate: TemplateRow | None,
    rules: FeedbackRules,
) -> Judgement:
    lift = signal == "approve" and rules.approve_lifts_anti
    if existing is not None:
        posterior = replace(existing, alpha=evidence.alpha, beta=evidence.beta)
        if signal == "approve" and existing.status == "demoted":
            return Judgement(
                row=replace(posterior, status="active"), lift_anti=lift, change="reactivated"
            )
        if signal == "approve" and existing.status == "shadow":
            return Judgement(
                row=replace(posterior, status="active"), lift_anti=lift, change="confirmed"
            )
        return Judgement(row=posterior, lift_anti=lift, change="updated")
    if candidate is not None and promotable(evidence, effectful=candidate.effectful, rules=rules):
        row = replace(candidate, status="active", alpha=evidence.alpha, beta=evidence.beta)
        return Judgement(row=row, lift_anti=lift, change="promoted")
    return Judgement(lift_anti=lift, change="none")


def _updated(existing: TemplateRow | None, evidence: Evidence) -> Judgement:
    if existing is None:
        return Judgement()
    return Judgement(
        row=replace(existing, alpha=evidence.alpha, beta=evidence.beta), change="updated"
    )
