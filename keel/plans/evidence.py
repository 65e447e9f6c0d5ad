"""Evidence about one (intent signature, plan shape) (plan-cache spec §3.12): the Beta posterior
of success and its Wilson lower bound, and the ranking of entries by that bound.

Every signal on a turn (`approve`, `reject`, `repeat`, `implicit_ok`, `implicit_fail`) is
evidence: a Beta(alpha, beta) posterior of success with a uniform prior, each signal counted at
its weight (`keel.plans.feedback.signal_weight`). The champion of an intent is the servable
entry with the highest lower bound, then the most recent. Pure arithmetic; the rules that act
on it are `keel.plans.feedback`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final, Literal, get_args

from keel.plans.store_port import Observation, SignalCount, TemplateRow

Signal = Literal["approve", "reject", "repeat", "implicit_ok", "implicit_fail"]
SIGNALS: Final[tuple[str, ...]] = get_args(Signal)
POSITIVE: Final = frozenset({"approve", "implicit_ok"})
NEGATIVE: Final = frozenset({"reject", "implicit_fail"})
SERVABLE: Final = frozenset({"active", "shadow"})


def wilson_lower(successes: float, n: float, z: float) -> float:
    """Wilson score lower bound of a success rate (0 with no evidence)."""
    if n < 1e-9:
        return 0.0
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0))
    return max((centre - margin) / (1 + z2 / n), 0.0)


def beta_mean(alpha: float, beta: float) -> float:
    """Mean of Beta(alpha, beta)."""
    return alpha / (alpha + beta)


@dataclass(frozen=True, kw_only=True, slots=True)
class Evidence:
    """Weighted signals on one (intent, shape)."""

    successes: float = 0.0
    failures: float = 0.0
    approvals: int = 0
    rejects: int = 0
    repeats: int = 0

    @property
    def n(self) -> float:
        """Weighted number of signals."""
        return self.successes + self.failures

    @property
    def alpha(self) -> float:
        """Beta posterior alpha (uniform prior)."""
        return 1.0 + self.successes

    @property
    def beta(self) -> float:
        """Beta posterior beta (uniform prior)."""
        return 1.0 + self.failures

    @property
    def mean(self) -> float:
        """Posterior mean of success."""
        return beta_mean(self.alpha, self.beta)

    def lower(self, z: float) -> float:
        """Wilson lower bound of success."""
        return wilson_lower(self.successes, self.n, z)

    def with_signal(self, signal: str, weight: float) -> Evidence:
        """This evidence plus one signal."""
        if signal in POSITIVE:
            return replace(
                self,
                successes=self.successes + weight,
                approvals=self.approvals + (signal == "approve"),
            )
        if signal in NEGATIVE:
            return replace(
                self, failures=self.failures + weight, rejects=self.rejects + (signal == "reject")
            )
        if signal == "repeat":
            return replace(self, repeats=self.repeats + 1)
        return self

    @staticmethod
    def of(observations: Iterable[Observation]) -> Evidence:
        """The evidence of observations (each counts its last signal, at its stored weight)."""
        tally = Counter((o.signal, o.signal_weight) for o in observations)
        return Evidence.of_counts(
            SignalCount(signal=signal, weight=weight, count=count)
            for (signal, weight), count in tally.items()
        )

    @staticmethod
    def of_counts(counts: Iterable[SignalCount]) -> Evidence:
        """The evidence of signal counts (`PlanStore.signal_counts`). Weighted sums are
        computed exactly and rounded once, so the evidence depends on which signals there
        are, not on the order they came in (ten implicit signals weigh exactly 3)."""
        successes, failures = Fraction(0), Fraction(0)
        by_signal: Counter[str] = Counter()
        for item in counts:
            by_signal[item.signal] += item.count
            if item.signal in POSITIVE:
                successes += Fraction(item.weight) * item.count
            elif item.signal in NEGATIVE:
                failures += Fraction(item.weight) * item.count
        return Evidence(
            successes=float(successes),
            failures=float(failures),
            approvals=by_signal["approve"],
            rejects=by_signal["reject"],
            repeats=by_signal["repeat"],
        )


def row_lower(row: TemplateRow, z: float) -> float:
    """The Wilson lower bound of an entry's stored posterior."""
    return wilson_lower(row.alpha - 1.0, row.alpha + row.beta - 2.0, z)


def ranked(rows: Iterable[TemplateRow], z: float) -> list[TemplateRow]:
    """Servable rows best first: highest lower bound, then most recent, then id."""
    servable = [r for r in rows if r.status in SERVABLE]
    return sorted(
        servable,
        key=lambda r: (-row_lower(r, z), -max(r.last_served_at, r.created_at), r.id),
    )


def champion(rows: Sequence[TemplateRow], z: float) -> TemplateRow | None:
    """The servable row with the highest lower bound, then the most recent."""
    best = ranked(rows, z)
    return best[0] if best else None
