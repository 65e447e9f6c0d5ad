"""Token usage and cost: per model call, per turn and per conversation.

Pure: folds `model_called` events; no IO, no clock.

Prices are per token, configured per model in `integrations.yml`
(`input_cost_per_token`, `output_cost_per_token`, in whatever currency the project uses).
`cost_of` is None when neither price is configured; when only one is, the other side is
taken as free (a self-hosted model may bill nothing for output, say). Totals keep cost
honest: calls whose cost is unknown are counted in `uncosted_calls` instead of being
silently taken as free, and `cost` is None when no call had a known cost.

Prompt tokens served from the provider's cache (`Usage.cached_input_tokens`) and written to
it (`Usage.cache_write_tokens`) are part of `input_tokens` but priced apart:
`cached_input_cost_per_token` and `cache_write_cost_per_token` when the model entry sets
them; otherwise, for `provider: anthropic`, at the multiples of the input price Anthropic
applies to every model (reads 0.1, five-minute writes 1.25); for any other provider at the
full input price (an upper bound: OpenAI's discount on cached tokens differs by model, so
set `cached_input_cost_per_token` to count it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from keel.events.model import Event, ModelCalled, TurnEnded, TurnStarted
from keel.llm.port import Usage
from keel.project.integrations import IntegrationsConfig
from keel.project.model_groups import ModelSpec


def cost_of(spec: ModelSpec | None, usage: Usage) -> float | None:
    """What `usage` cost on the model `spec` describes, or None when no price is configured."""
    if spec is None:
        return None
    per_input, per_output = spec.input_cost_per_token, spec.output_cost_per_token
    if per_input is None and per_output is None:
        return None
    read, written = cache_prices(spec)
    cached, writes = usage.cached_input_tokens, usage.cache_write_tokens
    fresh = max(usage.input_tokens - cached - writes, 0)
    prompt = fresh * (per_input or 0.0) + cached * read + writes * written
    return prompt + usage.output_tokens * (per_output or 0.0)


ANTHROPIC_CACHE_READ = 0.1
"""Anthropic's price of a cache read, as a multiple of the model's input price."""
ANTHROPIC_CACHE_WRITE = 1.25
"""Anthropic's price of a five-minute cache write, as a multiple of the input price."""


def cache_prices(spec: ModelSpec) -> tuple[float, float]:
    """(per cached token read, per token written to the cache) for `spec`: its configured
    prices, else the provider's known multiples of the input price, else the input price."""
    per_input = spec.input_cost_per_token or 0.0
    anthropic = spec.provider.strip().lower() == "anthropic"
    read_default = per_input * ANTHROPIC_CACHE_READ if anthropic else per_input
    write_default = per_input * ANTHROPIC_CACHE_WRITE if anthropic else per_input
    read = spec.cached_input_cost_per_token
    written = spec.cache_write_cost_per_token
    return (
        read_default if read is None else read,
        write_default if written is None else written,
    )


def spec_for(
    integrations: IntegrationsConfig, model: str, *, group_id: str | None = None
) -> ModelSpec | None:
    """The spec of the concrete model id `model` (for its prices), or None if not declared.

    The same model id may appear in several groups with different prices; `group_id` (the
    group the call's tier resolved to) is searched first, then every group in order.
    """
    groups = list(integrations.model_groups)
    first = integrations.group(group_id) if group_id is not None else None
    if first is not None:
        groups.insert(0, first)
    for group in groups:
        for spec in group.models:
            if spec.model == model:
                return spec
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class UsageTotals:
    """Tokens, latency and cost summed over some model calls."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Of `input_tokens`, those read from the providers' prompt caches."""
    cache_write_tokens: int = 0
    """Of `input_tokens`, those written to the providers' prompt caches."""
    latency_ms: float = 0.0
    cost: float | None = None
    """Sum of the known costs; None when no call had a known cost."""
    uncosted_calls: int = 0
    """Calls whose cost is unknown (no price configured), left out of `cost`."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def add(self, event: ModelCalled) -> UsageTotals:
        """These totals with one more call."""
        return self + UsageTotals(
            calls=1,
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cached_input_tokens=event.cached_input_tokens,
            cache_write_tokens=event.cache_write_tokens,
            latency_ms=event.latency_ms,
            cost=event.cost,
            uncosted_calls=1 if event.cost is None else 0,
        )

    def __add__(self, other: UsageTotals) -> UsageTotals:
        if self.cost is None:
            cost = other.cost
        else:
            cost = self.cost if other.cost is None else self.cost + other.cost
        return UsageTotals(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            latency_ms=self.latency_ms + other.latency_ms,
            cost=cost,
            uncosted_calls=self.uncosted_calls + other.uncosted_calls,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnUsage:
    """The model usage of one turn; `turn_id` is None for calls outside any turn."""

    turn_id: str | None
    totals: UsageTotals


def totals(events: Iterable[Event]) -> UsageTotals:
    """Usage summed over every `model_called` event (a whole conversation's log, say)."""
    found = UsageTotals()
    for event in events:
        if isinstance(event, ModelCalled):
            found = found.add(event)
    return found


def per_turn(events: Iterable[Event]) -> tuple[TurnUsage, ...]:
    """Usage per turn, in log order; every `turn_started` gives one entry (maybe all zero).

    A call belongs to the turn opened by the last `turn_started`, until its `turn_ended`.
    Calls outside any turn are grouped into entries with `turn_id=None`, in place.
    """
    found: list[TurnUsage] = []
    open_turn = False
    for event in events:
        if isinstance(event, TurnStarted):
            found.append(TurnUsage(turn_id=event.turn_id, totals=UsageTotals()))
            open_turn = True
        elif isinstance(event, TurnEnded):
            open_turn = False
        elif isinstance(event, ModelCalled):
            if not open_turn and (not found or found[-1].turn_id is not None):
                found.append(TurnUsage(turn_id=None, totals=UsageTotals()))
            last = found[-1]
            found[-1] = TurnUsage(turn_id=last.turn_id, totals=last.totals.add(event))
    return tuple(found)


def by_model(events: Iterable[Event]) -> Mapping[str, UsageTotals]:
    """Usage per concrete model id, in order of first use."""
    return _grouped(events, lambda event: event.model)


def by_tier(events: Iterable[Event]) -> Mapping[str, UsageTotals]:
    """Usage per tier (`router`, `default`, `reasoning`, ...), in order of first use."""
    return _grouped(events, lambda event: event.tier)


def _grouped(
    events: Iterable[Event], key: Callable[[ModelCalled], str]
) -> Mapping[str, UsageTotals]:
    found: dict[str, UsageTotals] = {}
    for event in events:
        if isinstance(event, ModelCalled):
            name = key(event)
            found[name] = found.get(name, UsageTotals()).add(event)
    return MappingProxyType(found)


__all__ = [
    "TurnUsage",
    "UsageTotals",
    "by_model",
    "by_tier",
    "cache_prices",
    "cost_of",
    "per_turn",
    "spec_for",
    "totals",
]
