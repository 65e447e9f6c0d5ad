"""Head sampling as `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` describe it.

The decisions of the OpenTelemetry SDK's samplers: `always_on`, `always_off`,
`traceidratio` (the trace id's low 64 bits below `rate * 2**64`, so every service that
samples one trace id by ratio agrees), and their `parentbased_*` forms (a span with a
valid parent follows the parent's sampled flag; a root span asks the named sampler). The
default is `parentbased_always_on`. An unknown name is logged and the default used, as
the SDK does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

_log = logging.getLogger("keel.observe")

_LOW_64 = (1 << 64) - 1
_ROOTS = {"always_on", "always_off", "traceidratio"}


@dataclass(frozen=True, kw_only=True, slots=True)
class Sampler:
    """Which traces are recorded."""

    root: str = "always_on"
    """The decision for a span with no valid parent: `always_on`, `always_off` or
    `traceidratio`."""

    rate: float = 1.0
    """`traceidratio`'s rate, 0 to 1."""

    parent_based: bool = True
    """A span with a valid parent follows the parent's sampled flag."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Sampler:
        """The sampler the standard variables name (the SDK's default when they name none)."""
        name = env.get("OTEL_TRACES_SAMPLER", "").strip().lower() or "parentbased_always_on"
        parent_based = name.startswith("parentbased_")
        root = name.removeprefix("parentbased_")
        if root not in _ROOTS:
            _log.warning("OTEL_TRACES_SAMPLER %r is not supported: sampling every trace", name)
            return cls()
        rate = 1.0
        if root == "traceidratio":
            raw = env.get("OTEL_TRACES_SAMPLER_ARG", "").strip() or "1.0"
            try:
                rate = float(raw)
            except ValueError:
                rate = -1.0
            if not 0.0 <= rate <= 1.0:
                _log.warning("OTEL_TRACES_SAMPLER_ARG %r is not a rate from 0 to 1: using 1", raw)
                rate = 1.0
        return cls(root=root, rate=rate, parent_based=parent_based)

    def sampled(self, trace_id: int, parent_sampled: bool | None) -> bool:
        """Whether a span of `trace_id` is recorded; `parent_sampled` is its valid parent's
        sampled flag, None for a root span."""
        if parent_sampled is not None and self.parent_based:
            return parent_sampled
        if self.root == "always_on":
            return True
        if self.root == "always_off":
            return False
        return (trace_id & _LOW_64) < round(self.rate * (_LOW_64 + 1))
