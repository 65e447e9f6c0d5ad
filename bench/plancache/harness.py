"""The side-by-side loop: every system sees every turn of the same stream, in order.

Per turn: apply a change due at this index (each system hears of it; only Metnos's
operator may bump an epoch), run nightly maintenance when the day changes, compute the
gold outcome, then for each system run the turn, judge it, and send the scripted user's
signals: implicit ones from the user model (a wrong outcome is rephrased or corrected half
the time, `implicit_fail`; a right read-only answer gets a follow-up a fifth of the time,
`implicit_ok`), then the turn's explicit feedback if it has one (approve when right,
reject when wrong, flipped on the 5 % mislabelled ones). The draws are part of the stream,
so every system gets the same user.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

from judge import Gold, Judge
from metrics import Tally
from oracle import _CATALOGS, catalog_for, gold_outcome, gold_plan
from stream import BY_NAME, Stream, Turn
from systems import Report, System, TurnCtx

IMPLICIT_FAIL, IMPLICIT_OK = 0.5, 0.2


@dataclass(frozen=True, kw_only=True, slots=True)
class Outcome:
    """The tallies, in the systems' order."""

    tallies: tuple[Tally, ...]
    turns: int


def day_of(turn: Turn) -> date:
    return datetime.fromtimestamp(turn.now, UTC).date()


def signals(turn: Turn, success: bool, effectful: bool) -> list[str]:
    """What the scripted user says after a turn (implicit first, then explicit)."""
    out: list[str] = []
    if not success and turn.draw < IMPLICIT_FAIL:
        out.append("implicit_fail")
    if success and not effectful and turn.draw < IMPLICIT_OK:
        out.append("implicit_ok")
    if turn.feedback:
        out.append("approve" if success != turn.flip else "reject")
    return out


async def run_stream(
    stream: Stream,
    systems: Sequence[System],
    progress: Callable[[int], None] | None = None,
) -> Outcome:
    """Run every turn of `stream` through every system."""
    judge = Judge(changes=stream.changes, catalogs=_CATALOGS)
    tallies = [Tally(name=s.name) for s in systems]
    changes = {c.turn: c for c in stream.changes}
    current_day: date | None = None
    for turn in stream.turns:
        if turn.index in changes:
            for system in systems:
                system.on_change(changes[turn.index])
        version = stream.version_at(turn.index)
        catalog = catalog_for(version)
        day = day_of(turn)
        if current_day is not None and day != current_day:
            for system in systems:
                await system.nightly(catalog, turn.now)
        current_day = day
        request = turn.request
        gold = Gold(
            request=request,
            run=await gold_outcome(request, version, day),
            plan=gold_plan(request, version),
            version=version,
            index=turn.index,
        )
        ctx = TurnCtx(turn=turn, request=request, version=version, catalog=catalog, day=day)
        for system, tally in zip(systems, tallies, strict=True):
            started = time.perf_counter()
            report: Report = await system.turn(ctx)
            tally.seconds += time.perf_counter() - started
            success = judge.judge(tally, report, gold, tagged=system.tagged)
            started = time.perf_counter()
            for signal in signals(turn, success, BY_NAME[request.family].effectful):
                await system.feedback(ctx, report, signal)
            tally.seconds += time.perf_counter() - started
        if progress is not None:
            progress(turn.index)
    return Outcome(tallies=tuple(tallies), turns=len(stream.turns))
