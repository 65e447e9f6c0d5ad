"""Where Keel's time per round trip goes: the timed runs under cProfile, split by code area,
and how many function calls a round trip makes.

Every function's own time (cProfile's `tottime`, never counted twice) goes to the area of
the file it lives in; a built-in (`isinstance`, the C JSON encoder, `datetime.now`) goes
to the area of whoever called it, call edge by call edge. The areas' shares come from
profiled runs (cProfile slows small Python functions more than C code, so read them as
approximate) and are applied to the unprofiled median.
"""

from __future__ import annotations

import cProfile
import pstats
from dataclasses import dataclass

from scenarios import Case, Scenario

AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "event log: JSON encode and decode",
        ("keel/events/codec.py", "keel/events/fields.py", "/json/"),
    ),
    ("fold events into the state", ("keel/events/fold.py",)),
    ("event objects: build, freeze, timestamp", ("keel/events/", "dataclasses.py", "keel/ids.py")),
    ("event store", ("keel/stores/",)),
    (
        "prompt, history fitting, tier",
        (
            "keel/loop/prompt",
            "keel/loop/history.py",
            "keel/loop/model_call.py",
            "keel/loop/model_request.py",
            "keel/llm/",
        ),
    ),
    ("offered tools, conditions", ("keel/loop/offer.py", "keel/conditions/")),
    (
        "tool dispatch, argument validation",
        ("keel/tools/", "keel/loop/tools_run.py", "<string>", "fastjsonschema"),
    ),
    ("scripted model", ("keel/testing/",)),
    ("asyncio (tasks, timeouts, shield)", ("asyncio/",)),
    ("turn loop, other engine code", ("keel/",)),
)
OTHER = "other (contextlib, typing, ...)"


@dataclass(frozen=True, kw_only=True, slots=True)
class Share:
    """One area's share of a profiled Keel turn."""

    label: str
    share: float


def area_of(file: str) -> str | None:
    """The area a source file belongs to; `None` for built-ins."""
    if file == "~":
        return None
    for label, parts in AREAS:
        if any(part in file for part in parts):
            return label
    return OTHER


Stats = dict[tuple[str, int, str], tuple[int, int, float, float, dict[object, tuple[float, ...]]]]


def _spread(stats: Stats) -> dict[str, float]:
    own = dict.fromkeys([label for label, _ in AREAS] + [OTHER], 0.0)
    for (file, _line, _name), (_cc, _nc, tottime, _ct, callers) in stats.items():
        area = area_of(file)
        if area is not None:
            own[area] += tottime
            continue
        for caller, edge in callers.items():
            caller_file = caller[0] if isinstance(caller, tuple) else "~"
            own[area_of(caller_file) or OTHER] += float(edge[2])
    return own


@dataclass(frozen=True, kw_only=True, slots=True)
class Profiled:
    """What the profiled runs of one Keel case showed."""

    shares: list[Share]
    events: int
    """Events appended per turn."""
    calls_per_round_trip: float
    """Every call cProfile counted (Python functions and built-ins), per model round trip:
    exact and the same from run to run, unlike timings."""


async def profile(case: Case, scenario: Scenario, runs: int) -> Profiled:
    """Profile `runs` timed runs of `case`: the shares, events per turn, calls per trip."""
    profiler = cProfile.Profile()
    events = 0
    for _ in range(runs):
        await case.prepare()
        profiler.enable()
        result = await case.run()
        profiler.disable()
        events = len(getattr(result, "events", ()))
    stats = pstats.Stats(profiler)
    calls = stats.total_calls / max(runs, 1) / scenario.round_trips  # type: ignore[attr-defined]
    raw: Stats = stats.stats  # type: ignore[attr-defined]
    own = _spread(raw)
    whole = sum(own.values())
    shares = [Share(label=label, share=value / whole) for label, value in own.items()]
    return Profiled(shares=shares if whole > 0 else [], events=events, calls_per_round_trip=calls)
