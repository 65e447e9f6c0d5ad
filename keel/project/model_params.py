"""Request parameters of a model entry in `integrations.yml` (model groups, legacy inline `llm:`).

    model_groups:
      - id: main
        models:
          - provider: openai
            model: gpt-4o-mini
            temperature: 0.2        # number, 0..2 (Anthropic: 0..1)
            max_tokens: 400         # whole number > 0
            top_p: 0.9              # number, 0..1
            seed: 7                 # whole number (not sent to Anthropic, which has none)
            stop: ["\nUser:"]       # text or list of texts (Anthropic: `stop_sequences`)
            presence_penalty: 0.1   # any other key: sent to the provider as written

The five sampling parameters are checked at load (`config.model_groups.bad_param`, an
error at the key's line: the provider would refuse every request) and sent on every
request of that model. A value may come from `${VAR}`; a number written as text is read as
the number. Any other key of the entry is a provider extra and is sent as written (merged
into the request body), as Mantle passes it on to the provider, except the client settings
in `CLIENT_KEYS` (timeouts, Azure deployment settings, embedding dimensions, the legacy
inline `llm.max_prompt_tokens`), which are
not part of a chat request. `extra_body:` (a mapping) is merged into the body last.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from keel.source.reporter import Reporter, key_line

PARAM_KEYS = frozenset({"temperature", "max_tokens", "top_p", "seed", "stop"})
"""The sampling parameters Keel checks and sends by name."""
CLIENT_KEYS = frozenset(
    {
        "extra_body",
        "timeout",
        "request_timeout",
        "max_retries",
        "api_version",
        "api_type",
        "deployment",
        "use_chat_completions_endpoint",
        "dimensions",
        "cache",
        "max_prompt_tokens",
    }
)
"""Keys of a model entry that configure the client, never sent as request parameters."""
NO_SEED_PROVIDERS = frozenset({"anthropic"})
"""Providers whose API has no `seed`; it is not sent to them (a warning at load)."""
CODE = "config.model_groups.bad_param"


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelParams:
    """What a model entry asks to send with every request (None / empty: not sent)."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    extra: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Provider extras: other keys of the entry, `${VAR}`-expanded, sent as written."""


def parse_params(
    r: Reporter, item: Mapping[Any, Any], expanded: Mapping[str, object], where: str
) -> ModelParams:
    """The parameters of one model entry: `item` is the entry as written (for lines),
    `expanded` its keys that are not model settings, after `${VAR}` expansion."""
    provider = str(item.get("provider", "")).strip().lower()
    temperature_max = 1.0 if provider in NO_SEED_PROVIDERS else 2.0
    read = _Reader(r=r, item=item, expanded=expanded, where=where)
    seed = read.whole("seed", minimum=None)
    if seed is not None and provider in NO_SEED_PROVIDERS:
        message = f"`{where}.seed`: the {provider} API has no seed; it is not sent"
        r.warning("config.model_groups.unsupported_param", key_line(item, "seed"), message)
        seed = None
    extra = {k: v for k, v in expanded.items() if k not in PARAM_KEYS and k not in CLIENT_KEYS}
    return ModelParams(
        temperature=read.number("temperature", 0.0, temperature_max),
        max_tokens=read.whole("max_tokens", minimum=1),
        top_p=read.number("top_p", 0.0, 1.0),
        seed=seed,
        stop=read.stop(),
        extra=MappingProxyType(extra),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class _Reader:
    r: Reporter
    item: Mapping[Any, Any]
    expanded: Mapping[str, object]
    where: str

    def _value(self, key: str) -> object:
        value = self.expanded.get(key)
        if isinstance(value, str) and not value.strip():
            return None  # an unset `${VAR}`: already warned as config.env.unset
        return value

    def _bad(self, key: str, expected: str, value: object) -> None:
        message = f"`{self.where}.{key}` must be {expected}, got {value!r}"
        self.r.error(CODE, key_line(self.item, key), message, key=f"{self.where}.{key}")

    def number(self, key: str, low: float, high: float) -> float | None:
        value = _as_number(self._value(key))
        if isinstance(value, bool) or not isinstance(value, int | float):
            value = None
        if value is None or not low <= float(value) <= high:
            if self._value(key) is not None:
                self._bad(key, f"a number from {low:g} to {high:g}", self.expanded.get(key))
            return None
        return float(value)

    def whole(self, key: str, *, minimum: int | None) -> int | None:
        value = _as_number(self._value(key))
        if isinstance(value, bool) or not isinstance(value, int):
            value = None
        if value is None or (minimum is not None and value < minimum):
            if self._value(key) is not None:
                expected = "a whole number" + (f" >= {minimum}" if minimum is not None else "")
                self._bad(key, expected, self.expanded.get(key))
            return None
        return value

    def stop(self) -> tuple[str, ...] | None:
        value = self._value("stop")
        if value is None:
            return None
        if isinstance(value, str) and value:
            return (value,)
        items = tuple(value) if isinstance(value, list | tuple) else ()
        if items and all(isinstance(s, str) and s for s in items):
            return tuple(str(s) for s in items)
        self._bad("stop", "a text or a list of texts", value)
        return None


def _as_number(value: object) -> object:
    """`value`, with a number written as text (often from `${VAR}`) read as the number."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return value


__all__ = ["CLIENT_KEYS", "PARAM_KEYS", "ModelParams", "parse_params"]
