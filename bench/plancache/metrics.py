"""Per-system tallies and the exact Clopper-Pearson bound.

`Tally` counts what the judge (`judge.py`) decides turn by turn; `upper_bound` is the
one-sided 95 % exact (Clopper-Pearson) upper confidence bound of a rate, found by bisection
on the binomial CDF (about 3/n with no events).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("intent", "planner", "filler", "synthesis")


def _log_pmf(k: int, n: int, p: float) -> float:
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    return min(1.0, sum(math.exp(_log_pmf(i, n, p)) for i in range(k + 1)))


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float:
    """The exact one-sided upper bound of a rate with `k` events in `n` trials."""
    if n == 0:
        return 1.0
    if k >= n:
        return 1.0
    alpha = 1.0 - confidence
    low, high = k / n, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if binomial_cdf(k, n, mid) > alpha:
            low = mid
        else:
            high = mid
    return high


@dataclass(slots=True)
class Tally:
    """What happened to one system over the stream."""

    name: str
    turns: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    embeddings: int = 0
    layers: Counter[str] = field(default_factory=Counter)
    """Cache-served turns by layer (`l3` for planned turns)."""
    kinds: Counter[str] = field(default_factory=Counter)
    kind_hits: Counter[str] = field(default_factory=Counter)
    attempts: int = 0
    """Turns where a cache served a plan (it may have failed and fallen through)."""
    fell_through: int = 0
    served: int = 0
    """Cache-served turns: the plan came from the cache, no planner call."""
    served_effectful: int = 0
    """Cache-served turns in which an effectful step ran."""
    effectful_attempts: int = 0
    false_replays: int = 0
    false_changed: int = 0
    """False replays on requests whose gold plan some past change altered (stale plans)."""
    false_by_kind: Counter[str] = field(default_factory=Counter)
    false_examples: list[str] = field(default_factory=list)
    unsafe: int = 0
    unsafe_examples: list[str] = field(default_factory=list)
    span_mismatch: int = 0
    """Served attempts where an effectful request-span argument is not a value of the request."""
    refused: int = 0
    """Served attempts the effect gate refused (Keel)."""
    leaking: int = 0
    """Served attempts that gave the asking customer another customer's data (`judge.leak`)."""
    leak_examples: list[str] = field(default_factory=list)
    principal_attempts: int = 0
    """Served attempts on requests of a signed-in customer (where a leak can happen)."""
    adversarial: dict[str, Counter[str]] = field(default_factory=dict)
    """Adversarial family -> turns, attempts, served, effectful, false, unsafe, leaking,
    successes (`family_adversarial`)."""
    adversarial_calls: Counter[str] = field(default_factory=Counter)
    """Model calls by category on the adversarial turns."""
    failures: Counter[str] = field(default_factory=Counter)
    """Every false, unsafe or leaking replay: what, family, asker, request, answer, calls."""
    stale: Counter[str] = field(default_factory=Counter)
    stale_served: Counter[str] = field(default_factory=Counter)
    successes: int = 0
    opportunities: int = 0
    """Turns whose family's gold template the system had already run since it last changed."""
    missed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    """Wall time spent in the system's turns and feedback (its tools' mock work included)."""
    seen: Any = field(default_factory=hashlib.sha256)
    """A running hash of the request texts this system was given, in order."""

    def total_calls(self) -> int:
        return sum(self.calls[c] for c in CATEGORIES)

    def rate(self, count: int, of: int) -> float:
        return count / of if of else 0.0


def as_json(t: Tally) -> dict[str, object]:
    """The counts of a tally (for `--json` and the smoke test)."""
    plain: tuple[str, ...] = ("turns", "embeddings", "attempts", "fell_through", "served")
    plain += ("served_effectful",)
    plain += ("effectful_attempts", "false_replays", "false_changed", "unsafe", "refused")
    plain += ("successes", "opportunities", "missed", "span_mismatch")
    plain += ("leaking", "principal_attempts")
    out: dict[str, object] = {"name": t.name, "stream": t.seen.hexdigest()}
    out.update({name: getattr(t, name) for name in plain})
    for name in ("calls", "layers", "kinds", "kind_hits", "stale", "stale_served"):
        out[name] = dict(getattr(t, name))
    out["adversarial"] = {f: dict(c) for f, c in sorted(t.adversarial.items())}
    out["adversarial_calls"] = dict(t.adversarial_calls)
    out["failures"] = dict(t.failures)
    return out


def adversarial_total(t: Tally, name: str) -> int:
    """One count summed over the adversarial families."""
    return sum(c[name] for c in t.adversarial.values())


def pct(value: float) -> str:
    """A percentage with one decimal."""
    return f"{100 * value:.1f} %"


def saved(system: Tally, baseline: Tally, category: str | None = None) -> str:
    """1 - calls(system) / calls(baseline), for one category or all of them."""
    mine = system.total_calls() if category is None else system.calls[category]
    base = baseline.total_calls() if category is None else baseline.calls[category]
    if base == 0:
        return "n/a" if mine == 0 else f"+{mine} calls"
    return pct(1 - mine / base)
