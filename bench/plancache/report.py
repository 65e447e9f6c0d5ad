"""The tables printed and written to bench/RESULTS.md."""

from __future__ import annotations

from collections.abc import Sequence

from metrics import CATEGORIES, Tally, pct, saved, upper_bound
from stream import Stream

KINDS = ("exact", "paraphrase", "slot", "near_miss")


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _head(names: Sequence[str]) -> list[str]:
    return [_row(names), _row(["---"] + ["---:"] * (len(names) - 1))]


def calls_table(tallies: Sequence[Tally]) -> list[str]:
    base = tallies[0]
    out = _head(["system", "model calls / turn", "saved", *(f"{c} saved" for c in CATEGORIES)])
    for t in tallies:
        per_turn = t.total_calls() / max(t.turns, 1)
        out.append(
            _row(
                [
                    t.name,
                    f"{per_turn:.3f}",
                    saved(t, base),
                    *(saved(t, base, c) for c in CATEGORIES),
                ]
            )
        )
    counts = _head(["system", *CATEGORIES, "embeddings", "bench ms / turn"])
    for t in tallies:
        ms = f"{1000 * t.seconds / max(t.turns, 1):.2f}"
        counts.append(_row([t.name, *(t.calls[c] for c in CATEGORIES), t.embeddings, ms]))
    return [*out, "", *counts]


def hits_table(tallies: Sequence[Tally]) -> list[str]:
    out = _head(["system", "cache-served", "by layer", *(f"{k} hit" for k in KINDS), "missed hit"])
    for t in tallies[1:]:
        layers = ", ".join(f"{k} {v}" for k, v in sorted(t.layers.items()) if k != "l3")
        kinds = [pct(t.rate(t.kind_hits[k], t.kinds[k])) for k in KINDS]
        missed = f"{pct(t.rate(t.missed, t.opportunities))} ({t.missed}/{t.opportunities})"
        out.append(_row([t.name, pct(t.rate(t.served, t.turns)), layers or "-", *kinds, missed]))
    return out


def safety_table(tallies: Sequence[Tally]) -> list[str]:
    heads = ["system", "served attempts", "fell through", "false replays", "95 % upper"]
    heads += ["on changed requests", "others", "95 % upper", "on near misses"]
    out = _head(heads)
    for t in tallies[1:]:
        n, other = t.attempts, t.false_replays - t.false_changed
        false = f"{t.false_replays} ({pct(t.rate(t.false_replays, n))})"
        out.append(
            _row(
                [
                    t.name, n, t.fell_through, false,
                    pct(upper_bound(t.false_replays, n)), t.false_changed,
                    f"{other} ({pct(t.rate(other, n))})", pct(upper_bound(other, n)),
                    t.false_by_kind["near_miss"],
                ]
            )
        )  # fmt: skip
    return out


def unsafe_table(tallies: Sequence[Tally]) -> list[str]:
    heads = ["system", "effectful cache-served turns", "unsafe", "95 % upper", "gate refusals"]
    out = _head([*heads, "span values not in request"])
    for t in tallies[1:]:
        n = t.effectful_attempts
        cells = [t.name, t.served_effectful, f"{t.unsafe}/{n}", pct(upper_bound(t.unsafe, n))]
        spans = t.span_mismatch if t.name.startswith("Keel") else "-"
        out.append(_row([*cells, t.refused, spans]))
    return out


def stale_table(tallies: Sequence[Tally], stream: Stream) -> list[str]:
    names = [c.name.split(" ", 1)[0] for c in stream.changes]
    out = _head(["system", *(f"{n} stale / served" for n in names)])
    for t in tallies[1:]:
        cells = [f"{t.stale[c.name]}/{t.stale_served[c.name]}" for c in stream.changes]
        out.append(_row([t.name, *cells]))
    return out


def success_table(tallies: Sequence[Tally]) -> list[str]:
    base = tallies[0]
    out = _head(["system", "task success", "vs no cache"])
    for t in tallies:
        delta = 100 * (t.rate(t.successes, t.turns) - base.rate(base.successes, base.turns))
        out.append(_row([t.name, pct(t.rate(t.successes, t.turns)), f"{delta:+.1f} pt"]))
    return out


def examples(tallies: Sequence[Tally]) -> list[str]:
    out: list[str] = []
    for t in tallies[1:]:
        for title, items in (("false replays", t.false_examples), ("unsafe", t.unsafe_examples)):
            if items:
                out.append(f"{t.name}, first {title}:")
                out += [f"  - {item}" for item in items[:5]]
    return out


def reasons(tally: Tally, top: int = 14) -> str:
    """The most frequent miss/record reasons of one system."""
    return ", ".join(f"{r} {n}" for r, n in tally.reasons.most_common(top))
