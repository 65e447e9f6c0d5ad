"""Which cases the benchmark runs: the floor, Keel (in memory and on a SQLite file) and the
three peers, plus variants.

Standard library only (the case modules are imported by name, only where they are run).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True, slots=True)
class CaseSpec:
    """A framework (or a variant of one) and how to build its case."""

    label: str
    module: str
    options: dict[str, object] = field(default_factory=dict)
    kind: str = "peer"
    """`floor`, `keel` (Keel in memory and Keel on a SQLite file, each with its goal
    against the fastest peer), `peer` (counts for "fastest peer") or `variant` (shown,
    not ranked)."""
    dists: tuple[str, ...] = ()
    """Distributions whose versions the report lists."""


MAIN: tuple[CaseSpec, ...] = (
    CaseSpec(label="floor", module="case_floor", kind="floor", dists=("fastjsonschema",)),
    CaseSpec(label="keel", module="case_keel", kind="keel", dists=("keel",)),
    CaseSpec(label="keel, sqlite", module="case_keel", options={"store": "sqlite"}, kind="keel"),
    CaseSpec(
        label="langgraph",
        module="case_langgraph",
        dists=("langgraph", "langchain-core", "langgraph-prebuilt"),
    ),
    CaseSpec(label="openai-agents", module="case_agents", dists=("openai-agents", "openai")),
    CaseSpec(
        label="pydantic-ai", module="case_pydantic_ai", dists=("pydantic-ai-slim", "pydantic")
    ),
)

VARIANTS: tuple[CaseSpec, ...] = (
    CaseSpec(
        label="langgraph, InMemorySaver",
        module="case_langgraph",
        options={"checkpointer": True},
        kind="variant",
    ),
    CaseSpec(
        label="openai-agents, tracing on",
        module="case_agents",
        options={"tracing": True},
        kind="variant",
    ),
)

TELEMETRY = (
    CaseSpec(
        label="keel, metrics on",
        module="case_keel",
        options={"telemetry": "metrics"},
        kind="variant",
    ),
    CaseSpec(
        label="keel, telemetry on", module="case_keel", options={"telemetry": True}, kind="variant"
    ),
)
"""`--telemetry`: Keel counting every run into the metrics (tracing off), and Keel with
tracing (every turn, OTLP to a local receiver process) and metrics on."""

ALL: tuple[CaseSpec, ...] = MAIN + VARIANTS


def by_label(labels: str | None, telemetry: bool = False) -> tuple[CaseSpec, ...]:
    """The cases named in a comma-separated list (all of them for `None`), plus Keel with
    telemetry on when `telemetry`."""
    if telemetry:
        return (*by_label(labels), *TELEMETRY)
    if labels is None:
        return ALL
    wanted = [label.strip() for label in labels.split(",") if label.strip()]
    known = {spec.label: spec for spec in ALL}
    unknown = [label for label in wanted if label not in known]
    if unknown:
        raise SystemExit(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return tuple(known[label] for label in wanted)
