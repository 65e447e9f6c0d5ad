"""A token bucket per API key, on an injected clock.

Each key has a bucket of `burst` tokens that refills at `per_second` tokens a second;
every authenticated request takes one token. An empty bucket answers 429 with
`Retry-After` (whole seconds until a token is back). Buckets live in the process: with
several workers each one limits on its own (see docs/deploy.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from keel.ids import Clock

_RATE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*/\s*(second|minute|hour)\s*\Z")
_PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}


@dataclass(frozen=True, kw_only=True, slots=True)
class RateLimit:
    """`burst` requests at once, refilled at `per_second`; `burst` 0 turns limiting off."""

    burst: float = 120.0
    per_second: float = 2.0

    @classmethod
    def parse(cls, text: str) -> RateLimit:
        """`N/second`, `N/minute` or `N/hour` (burst N, refilled evenly over the period).

        `off` (or `0/minute`) disables the limit. Raises ValueError for anything else.
        """
        if text.strip().lower() == "off":
            return cls(burst=0.0, per_second=0.0)
        match = _RATE.match(text)
        if match is None:
            raise ValueError(f"rate limit must look like 60/minute, got {text!r}")
        count = float(match.group(1))
        return cls(burst=count, per_second=count / _PERIODS[match.group(2)])

    @property
    def enabled(self) -> bool:
        """False when the limit is off."""
        return self.burst > 0


@dataclass(kw_only=True, slots=True)
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Token buckets keyed by API key name."""

    def __init__(self, limit: RateLimit, clock: Clock) -> None:
        self._limit = limit
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str) -> float | None:
        """Take a token for `key`: None when allowed, else the seconds until one is back."""
        if not self._limit.enabled:
            return None
        now = self._clock.now().timestamp()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(tokens=self._limit.burst, at=now)
        # A clock that steps back never adds tokens.
        elapsed = max(0.0, now - bucket.at)
        bucket.tokens = min(self._limit.burst, bucket.tokens + elapsed * self._limit.per_second)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        if self._limit.per_second <= 0:
            return math.inf
        return (1.0 - bucket.tokens) / self._limit.per_second


def retry_after_header(seconds: float) -> str:
    """The `Retry-After` value: whole seconds, at least 1."""
    if math.isinf(seconds):
        return "3600"
    return str(max(1, math.ceil(seconds)))
