"""The tables printed and written to bench/RESULTS.md."""

from __future__ import annotations

from collections.abc import Sequence

from family_adversarial import ADVERSARIAL, TWINS
from metrics import CATEGORIES, Tally, adversarial_total, pct, saved, upper_bound
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


def _counted(k: int, n: int) -> list[str]:
    return [f"{k}/{n}", pct(upper_bound(k, n))]


def replays_table(tallies: Sequence[Tally], *, adversarial: bool = False) -> list[str]:
    """False, unsafe and leaking replays apart, with their bounds (all turns, or only the
    adversarial ones)."""
    heads = ["system", "false / served attempts", "95 % upper", "unsafe / effectful attempts"]
    heads += ["95 % upper", "leaking / attempts for a signed-in customer", "95 % upper"]
    out = _head(heads)
    for t in tallies[1:]:
        if adversarial:
            n, effectful = adversarial_total(t, "attempts"), adversarial_total(t, "effectful")
            counts = [adversarial_total(t, k) for k in ("false", "unsafe", "leaking")]
            false, unsafe, leaking, asked = *counts, n
        else:
            n, effectful, asked = t.attempts, t.effectful_attempts, t.principal_attempts
            false, unsafe, leaking = t.false_replays, t.unsafe, t.leaking
        cells = [*_counted(false, n), *_counted(unsafe, effectful), *_counted(leaking, asked)]
        out.append(_row([t.name, *cells]))
    return out


def adversarial_calls_table(tallies: Sequence[Tally]) -> list[str]:
    """Model calls, cache-served turns and task success on the adversarial turns."""
    base = tallies[0]
    base_calls = sum(base.adversarial_calls[c] for c in CATEGORIES)
    out = _head(["system", "turns", "cache-served", "model calls", "saved", "task success"])
    for t in tallies:
        turns, calls = (
            adversarial_total(t, "turns"),
            sum(t.adversarial_calls[c] for c in CATEGORIES),
        )
        served = pct(t.rate(adversarial_total(t, "served"), turns))
        won = pct(1 - calls / base_calls) if base_calls else "n/a"
        ok = pct(t.rate(adversarial_total(t, "successes"), turns))
        out.append(_row([t.name, turns, served, calls, won, ok]))
    return out


def adversarial_families_table(tallies: Sequence[Tally]) -> list[str]:
    """Per adversarial family and system: served attempts / turns, then false / unsafe /
    leaking replays among those attempts."""
    kinds = {twin.name: kind for twins in TWINS.values() for kind, twin in twins}
    out = _head(["family", "kind", *(t.name for t in tallies[1:])])
    for family in ADVERSARIAL:
        cells = []
        for t in tallies[1:]:
            c = t.adversarial.get(family.name)
            if c is None:
                cells.append("-")
                continue
            counts = f"{c['false']}/{c['unsafe']}/{c['leaking']}"
            cells.append(f"{c['attempts']}/{c['turns']}: {counts}")
        out.append(_row([family.name, kinds.get(family.name, "base"), *cells]))
    return out


def examples(tallies: Sequence[Tally]) -> list[str]:
    out: list[str] = []
    for t in tallies[1:]:
        shown = (
            ("false replays", t.false_examples),
            ("unsafe", t.unsafe_examples),
            ("leaking", t.leak_examples),
        )
        for title, items in shown:
            if items:
                out.append(f"{t.name}, first {title}:")
                out += [f"  - {item}" for item in items[:5]]
    return out


def reasons(tally: Tally, top: int = 14) -> str:
    """The most frequent miss/record reasons of one system."""
    return ", ".join(f"{r} {n}" for r, n in tally.reasons.most_common(top))
