"""`plan_cache:` in agent.yml: whether the plan cache serves and records plans.

```yaml
plan_cache:
  enabled: true    # default false: the cache is opt-in per agent
  l0: true         # exact entries (default true)
  l1: true         # intent champions (default true)
```

A skill opts out with `plan_cache: false` in its frontmatter, and opts into the L3 planner
(one whole plan per request instead of one tool call per round trip) with `planner: true`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from keel.source.reporter import Reporter, key_line, warn_unknown_keys

PLAN_CACHE_KEYS: Final = frozenset({"enabled", "l0", "l1"})
CODE: Final = "config.plan_cache.bad_value"


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanCacheSettings:
    """`plan_cache` of agent.yml."""

    enabled: bool = False
    l0: bool = True
    l1: bool = True


def parse_plan_cache(r: Reporter, data: dict[str, Any]) -> PlanCacheSettings:
    """Read the `plan_cache` section (absent: disabled)."""
    section = data.get("plan_cache")
    if section is None:
        return PlanCacheSettings()
    if not isinstance(section, dict):
        r.error(CODE, key_line(data, "plan_cache"), "`plan_cache` must be a mapping")
        return PlanCacheSettings()
    warn_unknown_keys(
        r, section, PLAN_CACHE_KEYS, "config.plan_cache.unknown_key", where="plan_cache."
    )
    flags = {key: _flag(r, section, key, default=key != "enabled") for key in PLAN_CACHE_KEYS}
    return PlanCacheSettings(**flags)


def _flag(r: Reporter, section: dict[str, Any], key: str, *, default: bool) -> bool:
    value = section.get(key, default)
    if isinstance(value, bool):
        return value
    r.error(CODE, key_line(section, key), f"`plan_cache.{key}` must be true or false")
    return default
