"""Feedback rules: Beta/Wilson evidence, promotion, demotion, anti-entries, champions."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.plans.evidence import Evidence, champion, ranked, wilson_lower
from keel.plans.feedback import (
    DAY,
    FeedbackRules,
    Judgement,
    demotes,
    judge,
    promotable,
    shadow_seedable,
    signal_weight,
)
from keel.plans.store_port import Observation, SignalCount, TemplateRow

RULES = FeedbackRules()
METNOS = FeedbackRules.metnos()


def row(
    *,
    id: str = "l1-a",
    status: str = "active",
    effectful: bool = False,
    alpha: float = 1.0,
    beta: float = 1.0,
    created_at: float = 0.0,
    last_served_at: float = 0.0,
) -> TemplateRow:
    return TemplateRow(
        id=id,
        layer="l1",
        scope="s",
        key=id,
        intent_sig="list:files",
        slot_sig="",
        shape_hash="shape",
        plan_json="{}",
        stored_intent_json="[]",
        bindings_json="{}",
        request_text="list files",
        tools_sig="t",
        pool_sig="p",
        logic_sig="l",
        effectful=effectful,
        status=status,
        alpha=alpha,
        beta=beta,
        created_at=created_at,
        last_served_at=last_served_at,
    )


def evidence(*signals: str, rules: FeedbackRules = RULES) -> Evidence:
    found = Evidence()
    for signal in signals:
        found = found.with_signal(signal, signal_weight(signal, rules))
    return found


def judged(signal: str, prior: Evidence, **kwargs: Any) -> Judgement:
    rules = kwargs.pop("rules", RULES)
    assert isinstance(rules, FeedbackRules)
    return judge(
        signal,
        evidence=prior.with_signal(signal, signal_weight(signal, rules)),
        scope="s",
        intent_sig="list:files",
        shape_hash="shape",
        now=1000.0,
        rules=rules,
        **kwargs,
    )


# -- arithmetic ---------------------------------------------------------------------------


def test_wilson_lower_known_values() -> None:
    assert wilson_lower(0, 0, 1.96) == 0.0
    assert wilson_lower(3, 3, 1.96) == pytest.approx(3 / (3 + 1.96**2))
    assert wilson_lower(50, 100, 1.96) == pytest.approx(0.4038, abs=1e-3)


@given(st.floats(min_value=0, max_value=500), st.floats(min_value=0, max_value=500))
def test_wilson_lower_is_below_the_rate_and_in_range(ok: float, bad: float) -> None:
    n = ok + bad
    low = wilson_lower(ok, n, 1.645)
    assert 0.0 <= low <= 1.0
    if n > 0:
        assert low <= ok / n + 1e-9


def test_signal_weights() -> None:
    assert signal_weight("approve", RULES) == 1.0
    assert signal_weight("reject", RULES) == 1.0
    assert signal_weight("implicit_ok", RULES) == pytest.approx(0.3)
    assert signal_weight("implicit_fail", RULES) == pytest.approx(0.3)
    assert signal_weight("repeat", RULES) == 0.0
    assert signal_weight("nonsense", RULES) == 0.0


def test_evidence_counts_weighted_signals() -> None:
    found = evidence("approve", "implicit_ok", "reject", "repeat")
    assert found.successes == pytest.approx(1.3)
    assert found.failures == pytest.approx(1.0)
    assert (found.approvals, found.rejects, found.repeats) == (1, 1, 1)
    assert found.alpha == pytest.approx(2.3) and found.beta == pytest.approx(2.0)
    assert found.mean == pytest.approx(2.3 / 4.3)


def test_evidence_of_observations_uses_the_stored_weight() -> None:
    observations = [
        Observation(
            turn_id=str(i),
            scope="s",
            intent_sig="i",
            shape_hash="h",
            plan_json="{}",
            signal=signal,
            signal_weight=weight,
        )
        for i, (signal, weight) in enumerate([("approve", 1.0), ("implicit_ok", 0.5), ("", 0.0)])
    ]
    found = Evidence.of(observations)
    assert found.successes == pytest.approx(1.5)
    assert found.n == pytest.approx(1.5)


def test_evidence_of_counts_matches_the_observations_it_counts() -> None:
    counts = [
        SignalCount(signal="approve", weight=1.0, count=2),
        SignalCount(signal="implicit_ok", weight=0.3, count=3),
        SignalCount(signal="implicit_fail", weight=0.3, count=1),
        SignalCount(signal="reject", weight=1.0, count=1),
        SignalCount(signal="repeat", weight=0.0, count=4),
        SignalCount(signal="nonsense", weight=1.0, count=9),
    ]
    found = Evidence.of_counts(counts)
    assert found.successes == pytest.approx(2.9) and found.failures == pytest.approx(1.3)
    assert (found.approvals, found.rejects, found.repeats) == (2, 1, 4)
    expanded = [
        Observation(
            turn_id=f"{c.signal}{i}",
            scope="s",
            intent_sig="i",
            shape_hash="h",
            plan_json="{}",
            signal=c.signal,
            signal_weight=c.weight,
        )
        for c in counts
        for i in range(c.count)
    ]
    assert Evidence.of(expanded) == found
    assert Evidence.of(reversed(expanded)) == found


def test_ten_implicit_signals_weigh_exactly_three() -> None:
    found = Evidence.of_counts([SignalCount(signal="implicit_fail", weight=0.3, count=10)])
    assert found.n == 3.0
    assert demotes(
        "implicit_fail", found, effectful=False, serving=False, shadow=False, rules=RULES
    )


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["approve", "reject", "implicit_ok", "implicit_fail", "repeat"]),
            st.sampled_from([0.3, 0.5, 1.0]),
        ),
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_evidence_does_not_depend_on_the_order_of_signals(
    signals: list[tuple[str, float]], rng: Any
) -> None:
    def of(items: list[tuple[str, float]]) -> Evidence:
        return Evidence.of(
            Observation(
                turn_id=str(i),
                scope="s",
                intent_sig="i",
                shape_hash="h",
                plan_json="{}",
                signal=signal,
                signal_weight=weight,
            )
            for i, (signal, weight) in enumerate(items)
        )

    shuffled = list(signals)
    rng.shuffle(shuffled)
    assert of(shuffled) == of(signals)
    sequential = evidence_summed(signals)
    assert of(signals).successes == pytest.approx(sequential.successes)
    assert of(signals).failures == pytest.approx(sequential.failures)


def evidence_summed(signals: list[tuple[str, float]]) -> Evidence:
    found = Evidence()
    for signal, weight in signals:
        found = found.with_signal(signal, weight)
    return found


# -- promotion ----------------------------------------------------------------------------


def test_read_only_promotes_on_one_explicit_approve() -> None:
    assert promotable(evidence("approve"), effectful=False, rules=RULES)
    assert not promotable(evidence("implicit_ok"), effectful=False, rules=RULES)


def test_effectful_needs_an_approve_and_a_high_lower_bound() -> None:
    assert not promotable(evidence("approve"), effectful=True, rules=RULES)
    many_implicit = evidence(*["implicit_ok"] * 200)
    assert not promotable(many_implicit, effectful=True, rules=RULES)
    enough = evidence("approve", *["approve"] * 30)
    assert promotable(enough, effectful=True, rules=RULES)


def test_lower_bound_rule_needs_n_and_bound() -> None:
    # 0.3-weighted implicit signals: the bound reaches 0.90 only with a lot of them.
    assert not promotable(evidence(*["implicit_ok"] * 20), effectful=False, rules=RULES)
    assert promotable(evidence(*["implicit_ok"] * 90), effectful=False, rules=RULES)
    assert not promotable(
        evidence(*["implicit_ok"] * 90, *["implicit_fail"] * 30), effectful=False, rules=RULES
    )


def test_low_mean_blocks_single_approve_promotion() -> None:
    assert not promotable(evidence("reject", "reject", "approve"), effectful=False, rules=RULES)


def test_metnos_promotes_anything_on_one_approve() -> None:
    assert promotable(evidence("approve"), effectful=True, rules=METNOS)
    assert not promotable(evidence("implicit_ok"), effectful=True, rules=METNOS)


# -- demotion -----------------------------------------------------------------------------


def test_single_reject_demotes_effectful_but_not_read_only() -> None:
    found = evidence("approve", "reject")
    kwargs = {"serving": False, "shadow": False, "rules": RULES}
    assert demotes("reject", found, effectful=True, **kwargs)
    assert not demotes("reject", found, effectful=False, **kwargs)
    assert not demotes("implicit_fail", found, effectful=True, **kwargs)


def test_reject_on_the_serving_entry_or_a_shadow_demotes() -> None:
    found = evidence("approve", "reject")
    assert demotes("reject", found, effectful=False, serving=True, shadow=False, rules=RULES)
    assert demotes("reject", found, effectful=False, serving=False, shadow=True, rules=RULES)


def test_mean_rule_after_three() -> None:
    two = evidence("implicit_fail", "reject")
    assert not demotes("reject", two, effectful=False, serving=False, shadow=False, rules=RULES)
    three = evidence("approve", "reject", "reject")
    assert demotes("reject", three, effectful=False, serving=False, shadow=False, rules=RULES)


def test_metnos_demotes_at_three_rejects_only() -> None:
    kwargs = {"effectful": True, "serving": True, "shadow": True, "rules": METNOS}
    assert not demotes("reject", evidence("reject", "reject"), **kwargs)
    assert demotes("reject", evidence("reject", "reject", "reject"), **kwargs)


def test_shadow_seeding_only_in_metnos_mode() -> None:
    args = {"steps": 4, "intent_observations": 2, "has_champion": False, "effectful": True}
    assert not shadow_seedable(**args, rules=RULES)
    assert shadow_seedable(**args, rules=METNOS)
    assert not shadow_seedable(**{**args, "steps": 3}, rules=METNOS)
    assert not shadow_seedable(**{**args, "intent_observations": 1}, rules=METNOS)
    assert not shadow_seedable(**{**args, "has_champion": True}, rules=METNOS)
    assert not shadow_seedable(**args, rules=FeedbackRules(shadow_seeding=True))


# -- judge --------------------------------------------------------------------------------


def test_approve_promotes_the_candidate() -> None:
    candidate = row(status="shadow")
    result = judged("approve", Evidence(), existing=None, candidate=candidate, serving=False)
    assert result.change == "promoted"
    assert result.row.status == "active"
    assert result.row.alpha == 2.0 and result.row.beta == 1.0
    assert result.lift_anti


def test_implicit_ok_does_not_promote_alone() -> None:
    result = judged("implicit_ok", Evidence(), existing=None, candidate=row(), serving=False)
    assert result.change == "none" and result.row is None
    assert not result.lift_anti


def test_reject_demotes_effectful_entry_with_thirty_day_anti() -> None:
    existing = row(effectful=True)
    result = judged("reject", Evidence(), existing=existing, candidate=None, serving=False)
    assert result.change == "demoted"
    assert result.row.status == "demoted"
    assert result.row.last_served_at == 1000.0
    assert result.anti.expires_at == pytest.approx(1000.0 + 30 * DAY)
    assert result.anti.shape_hash == "shape"


def test_reject_without_entry_writes_anti_when_demotable() -> None:
    result = judged(
        "reject", evidence("reject", "reject"), existing=None, candidate=row(), serving=False
    )
    assert result.change == "demoted" and result.row is None
    assert result.anti is not None


def test_read_only_reject_only_updates_posterior() -> None:
    existing = row(alpha=5.0)
    result = judged(
        "reject", evidence(*["approve"] * 4), existing=existing, candidate=None, serving=False
    )
    assert result.change == "updated"
    assert result.row.status == "active" and result.row.beta == 2.0
    assert result.anti is None


def test_repeat_writes_one_hour_anti_and_demotes_nothing() -> None:
    result = judged("repeat", Evidence(), existing=row(), candidate=None, serving=True)
    assert result.change == "anti_repeat" and result.row is None
    assert result.anti.expires_at == 1000.0 + 3600.0
    assert result.anti.reason == "repeat"


def test_approve_reactivates_demoted_and_confirms_shadow() -> None:
    demoted = judged(
        "approve", Evidence(), existing=row(status="demoted"), candidate=None, serving=False
    )
    assert demoted.change == "reactivated" and demoted.row.status == "active"
    assert demoted.lift_anti
    shadow = judged(
        "approve", Evidence(), existing=row(status="shadow"), candidate=None, serving=False
    )
    assert shadow.change == "confirmed" and shadow.row.status == "active"


def test_implicit_ok_does_not_reactivate() -> None:
    result = judged(
        "implicit_ok", Evidence(), existing=row(status="demoted"), candidate=None, serving=False
    )
    assert result.row.status == "demoted"


def test_unknown_signal_changes_nothing() -> None:
    result = judged("shrug", Evidence(), existing=row(), candidate=row(), serving=True)
    assert result.change == "none" and result.row is None and result.anti is None


# -- champion -----------------------------------------------------------------------------


def test_champion_highest_lower_bound_then_recency() -> None:
    weak = row(id="weak", alpha=2.0, beta=1.0, created_at=50)
    strong = row(id="strong", alpha=30.0, beta=1.0, created_at=1)
    demoted = row(id="demoted", alpha=100.0, beta=1.0, status="demoted")
    assert champion([weak, strong, demoted], 1.645) is strong
    old = row(id="old", alpha=2.0, created_at=1)
    new = row(id="new", alpha=2.0, created_at=1, last_served_at=9)
    assert [r.id for r in ranked([old, new], 1.645)] == ["new", "old"]
    assert champion([demoted, row(id="stale", status="stale")], 1.645) is None


@given(
    st.lists(st.sampled_from(["approve", "reject", "implicit_ok", "implicit_fail"]), max_size=40)
)
def test_posterior_mean_stays_a_probability(signals: list[str]) -> None:
    found = evidence(*signals)
    assert 0.0 < found.mean < 1.0
    assert math.isclose(found.alpha + found.beta, 2.0 + found.n)
