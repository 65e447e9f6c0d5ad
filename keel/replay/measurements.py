"""Which fields of an event are measurements, and how two runs' measurements differ (pure).

A measurement says how long or how much something took, not what the engine did: it
differs from run to run (a real clock, a provider's latency) while the behaviour is the
same. A replay compares behaviour; measurements are set apart and reported.

| event | measurement fields |
| --- | --- |
| every event | `timestamp` |
| `model_called` | `latency_ms`, `input_tokens`, `output_tokens`, `cost` |
| `stage_timed` | `duration_ms` |
| `stages_timed` | `durations_ms` (every stage's time; the stage names are measured too) |

Not compared at all: a `model_called` event's `metadata.request`, the prompt as sent
(it shows the clock's time; what the engine did with the replies is compared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from types import MappingProxyType

EVERY_EVENT: tuple[str, ...] = ("timestamp",)
"""Measurement fields of every event."""

MEASUREMENTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "model_called": ("latency_ms", "input_tokens", "output_tokens", "cost"),
        "stage_timed": ("duration_ms",),
        "stages_timed": ("durations_ms",),
    }
)
"""Measurement fields by event type (besides `EVERY_EVENT`)."""

NOT_COMPARED_METADATA: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"model_called": ("request",)}
)
"""`metadata` keys left out of the comparison by event type."""


def fields_of(kind: str) -> tuple[str, ...]:
    """The measurement fields of an event of type `kind`."""
    return EVERY_EVENT + MEASUREMENTS.get(kind, ())


@dataclass(frozen=True, kw_only=True, slots=True)
class Compared:
    """One event as a replay compares it."""

    kind: str
    line: str
    """The behaviour: the event as JSON without its measurements (ids renamed)."""
    measured: Mapping[str, object]
    """Its measurement fields and their values."""


def split(data: Mapping[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """An encoded event's behaviour (every other field) and its measurements."""
    kind = str(data.get("type", ""))
    measured_fields = fields_of(kind)
    behaviour = {k: v for k, v in data.items() if k not in measured_fields}
    measured = {k: data[k] for k in measured_fields if k in data}
    metadata = behaviour.get("metadata")
    left_out = NOT_COMPARED_METADATA.get(kind, ())
    if isinstance(metadata, Mapping) and left_out:
        behaviour["metadata"] = {k: v for k, v in metadata.items() if k not in left_out}
    return behaviour, measured


@dataclass(frozen=True, kw_only=True, slots=True)
class MeasuredDifference:
    """A measurement of an event that behaved the same in both runs but measured otherwise."""

    position: int
    """0-based position of the event in the stored log."""
    kind: str
    field: str
    stored: object
    replayed: object

    @property
    def name(self) -> str:
        """`timestamp`, or `<event type>.<field>` (`model_called.latency_ms`)."""
        return self.field if self.field in EVERY_EVENT else f"{self.kind}.{self.field}"


def differences(
    stored: Sequence[Compared], replayed: Sequence[Compared]
) -> tuple[MeasuredDifference, ...]:
    """The measurements that differ between events whose behaviour matches (the events
    are paired as a diff of the behaviour lines pairs them)."""
    matcher = SequenceMatcher(
        None, [c.line for c in stored], [c.line for c in replayed], autojunk=False
    )
    found: list[MeasuredDifference] = []
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            position = block.a + offset
            before, after = stored[position], replayed[block.b + offset]
            for name in fields_of(before.kind):
                if before.measured.get(name) != after.measured.get(name):
                    found.append(
                        MeasuredDifference(
                            position=position,
                            kind=before.kind,
                            field=name,
                            stored=before.measured.get(name),
                            replayed=after.measured.get(name),
                        )
                    )
    return tuple(found)


def summary(found: Sequence[MeasuredDifference]) -> str | None:
    """One line for people: each measurement that differs and in how many events (in
    order of first difference), or None when none does."""
    counts: dict[str, int] = {}
    for difference in found:
        counts[difference.name] = counts.get(difference.name, 0) + 1
    if not counts:
        return None
    parts = ", ".join(f"{name} in {n} event(s)" for name, n in counts.items())
    return f"measurements differ (reported, not behaviour): {parts}"
