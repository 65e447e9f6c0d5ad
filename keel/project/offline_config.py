"""`routing:` and `extraction:` in agent.yml: when the router and the extractors run.

```yaml
routing:
  offline:
    enabled: auto      # auto (default): only when no model is configured; true: before
                       # every routing call; false: never
    threshold: 0.5     # best similarity needed to route without the model
    margin: 0.05       # how far the best must lead the second best
    choices: 3         # buttons on the clarifying question (no model)
extraction:
  enabled: auto        # the same three values, for collect steps
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from keel.source.reporter import Reporter, is_number, key_line, warn_unknown_keys

Enabled = Literal["auto", "always", "never"]
"""`auto`: only with no model configured; `always` (written `true`); `never` (`false`)."""

DEFAULT_THRESHOLD: Final = 0.5
DEFAULT_MARGIN: Final = 0.05
DEFAULT_CHOICES: Final = 3
ROUTING_KEYS: Final = frozenset({"offline"})
OFFLINE_KEYS: Final = frozenset({"enabled", "threshold", "margin", "choices"})
EXTRACTION_KEYS: Final = frozenset({"enabled"})
CODE: Final = "config.routing.bad_value"


@dataclass(frozen=True, kw_only=True, slots=True)
class RouterConfig:
    """`routing.offline`."""

    enabled: Enabled = "auto"
    threshold: float = DEFAULT_THRESHOLD
    margin: float = DEFAULT_MARGIN
    choices: int = DEFAULT_CHOICES


@dataclass(frozen=True, kw_only=True, slots=True)
class OfflineConfig:
    """The offline router and the extractors."""

    router: RouterConfig = field(default_factory=RouterConfig)
    extraction: Enabled = "auto"


def runs(enabled: Enabled, *, has_model: bool) -> bool:
    """Whether a part set to `enabled` runs, given whether a model is configured."""
    return enabled == "always" or (enabled == "auto" and not has_model)


def parse_offline(r: Reporter, data: dict[str, Any]) -> OfflineConfig:
    """Read `routing` and `extraction` from the top level of agent.yml."""
    routing = _section(r, data, "routing", ROUTING_KEYS)
    offline = _section(r, routing, "offline", OFFLINE_KEYS, where="routing.")
    extraction = _section(r, data, "extraction", EXTRACTION_KEYS)
    router = RouterConfig(
        enabled=_enabled(r, offline, "routing.offline."),
        threshold=_fraction(r, offline, "threshold", DEFAULT_THRESHOLD),
        margin=_fraction(r, offline, "margin", DEFAULT_MARGIN),
        choices=_choices(r, offline),
    )
    return OfflineConfig(router=router, extraction=_enabled(r, extraction, "extraction."))


def _section(
    r: Reporter, data: dict[str, Any], key: str, known: frozenset[str], where: str = ""
) -> dict[str, Any]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        r.error(CODE, key_line(data, key), f"`{where}{key}` must be a mapping")
        return {}
    warn_unknown_keys(r, value, known, "config.routing.unknown_key", where=f"{where}{key}.")
    return value


def _enabled(r: Reporter, data: dict[str, Any], where: str) -> Enabled:
    value = data.get("enabled", "auto")
    if value is True:
        return "always"
    if value is False:
        return "never"
    if value == "auto":
        return "auto"
    r.error(CODE, key_line(data, "enabled"), f"`{where}enabled` must be true, false or auto")
    return "auto"


def _fraction(r: Reporter, data: dict[str, Any], key: str, default: float) -> float:
    value = data.get(key)
    if value is None:
        return default
    if not is_number(value) or not 0 <= value <= 1:
        message = f"`routing.offline.{key}` must be a number from 0 to 1, got {value!r}"
        r.error(CODE, key_line(data, key), message)
        return default
    return float(value)


def _choices(r: Reporter, data: dict[str, Any]) -> int:
    value = data.get("choices")
    if value is None:
        return DEFAULT_CHOICES
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10:
        message = f"`routing.offline.choices` must be a whole number from 1 to 10, got {value!r}"
        r.error(CODE, key_line(data, "choices"), message)
        return DEFAULT_CHOICES
    return value
