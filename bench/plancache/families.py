"""Request families: phrasings, slot pools, the gold plan, and near-miss twins.

A `Family` is one kind of request ("complete task N"). It renders request texts (its first
English phrasing is the canonical one; the others, English and Italian, are paraphrases)
from slot values, builds the gold plan for those values at a catalog `Version` (the oracle
planner's answer), names its gold intent clauses (what a perfect intent extractor says),
and lists its near-miss twins: another family phrased almost the same way (polarity, verb
or object swap, an extra or a dropped clause, a temporal pivot) or the same family with a
confusable slot value ("task 4" against "task 40").

The families themselves are in `family_*.py`; `FAMILIES` gathers them in popularity order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date

from tools import Version
from world import (
    CANCEL_REASONS,
    CUSTOMERS,
    EVENT_TITLES,
    FILE_FOLDERS,
    ORDER_IDS,
    PRINCIPALS,
    SENDERS,
    TAGS,
    World,
)

BASE = World.baseline(date(2026, 3, 2))

# A pool entry: (gold value, English surfaces, Italian surfaces); surface 0 is canonical.
Entry = tuple[object, tuple[str, ...], tuple[str, ...]]
PlanJson = dict[str, object]


def same(*values: object) -> tuple[Entry, ...]:
    """Entries written the same way in both languages."""
    return tuple((v, (str(v),), (str(v),)) for v in values)


MONTHS_EN = ("March", "April")
MONTHS_IT = ("marzo", "aprile")


def _dates() -> tuple[Entry, ...]:
    """Every day of March and April 2026 in three English formats and one Italian."""
    out: list[Entry] = []
    for m, days in ((0, 31), (1, 30)):
        for d in range(1, days + 1):
            iso = f"2026-{m + 3:02d}-{d:02d}"
            en = (iso, f"{MONTHS_EN[m]} {d}, 2026", f"{d} {MONTHS_EN[m]} 2026")
            out.append((iso, en, (f"{d} {MONTHS_IT[m]} 2026",)))
    first = next(e for e in out if e[0] == "2026-03-05")
    return (first, *(e for e in out if e is not first))


def _first(first: tuple[object, ...], rest: range | tuple[object, ...]) -> tuple[object, ...]:
    return (*first, *(v for v in rest if v not in first))


POOLS: dict[str, tuple[Entry, ...]] = {
    "task": same(*_first((4, 40, 7, 17, 3, 30), range(1, 51))),
    "task2": same(*_first((9, 19), range(1, 51))),
    "title": same(
        "buy milk",
        "call the plumber",
        "renew passport",
        "pay rent",
        "book dentist",
        "fix the bike",
        "water the plants",
        "send invoices",
        "plan the trip",
        "buy a gift",
        "clean the garage",
        "update the CV",
    ),
    "tag": same(*TAGS),
    "folder": same(*FILE_FOLDERS),
    "dest": same("/archive", "/projects/beta", "/docs", "/tmp", "/photos"),
    "path": same(*_first(("/docs/report1.pdf",), tuple(BASE.files))),
    "glob": tuple(
        (f"*.{e}", (f"*.{e}", e.upper()), (f"*.{e}", e.upper()))
        for e in ("pdf", "txt", "log", "jpg", "tmp")
    ),
    "sender": same(*SENDERS),
    "to": same("bob@acme.io", *SENDERS[:1], *SENDERS[2:], "erin@acme.io", "fred@example.com"),
    "window": (
        ("today", ("today",), ("oggi",)),
        ("yesterday", ("yesterday",), ("ieri",)),
        ("last_week", ("last week",), ("la settimana scorsa",)),
    ),
    "topic": (
        ("invoice", ("invoice",), ("fattura",)),
        ("meeting", ("meeting",), ("riunione",)),
        ("contract", ("contract",), ("contratto",)),
        ("holiday", ("holiday",), ("vacanza",)),
    ),
    "date": _dates(),
    "time": same(*(f"{h:02d}:{m}" for h in range(8, 19) for m in ("00", "30"))),
    "event": same(*EVENT_TITLES, "lunch with Ann", "budget call", "yoga"),
    "feature": (
        ("notifications", ("notifications",), ("le notifiche",)),
        ("dark_mode", ("dark mode",), ("la dark mode",)),
        ("auto_backup", ("auto backup",), ("il backup automatico",)),
        ("location_sharing", ("location sharing",), ("la condivisione della posizione",)),
    ),
    "order": same(*_first(("W14", "W140", "W27", "W270", "W35"), ORDER_IDS)),
    "customer": same(*CUSTOMERS),
    "porder": same(*(o for p in PRINCIPALS for o in p.orders)),
    "porder2": same(*(o for p in PRINCIPALS for o in (*p.orders[1:], p.orders[0]))),
    "reason": same(*CANCEL_REASONS),
    "body": same(
        "running late",
        "see you at 5",
        "thanks for the update",
        "call me back",
        "meeting moved to Friday",
        "all done",
        "lunch tomorrow?",
        "got it",
    ),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Twin:
    """A near miss of a family: `family` (None: the same one) with some slot values forced."""

    family: str | None = None
    values: Mapping[str, object] = field(default_factory=dict)
    kind: str = "pivot"


@dataclass(frozen=True, kw_only=True, slots=True)
class Family:
    """One kind of request (see the module docstring)."""

    name: str
    clauses: tuple[tuple[str, str], ...]
    """Gold intent: (verb, object) per clause, in order."""
    slots: Mapping[str, str]
    """Slot name -> pool name."""
    en: tuple[str, ...]
    it: tuple[str, ...]
    plan: Callable[[Mapping[str, object], Version], PlanJson]
    twins: tuple[Twin, ...] = ()
    effectful: bool = False
    principal: bool = False
    """Asked by a signed-in customer: the plan reads that customer's context (`me`...)."""
    disguise: Mapping[str, Callable[[str], str]] = field(default_factory=dict)
    """Slot name -> how its value is written (lookalike characters), after the surface."""

    @property
    def texts(self) -> tuple[tuple[str, str], ...]:
        """Every phrasing with its language; the first is canonical."""
        return tuple(("en", t) for t in self.en) + tuple(("it", t) for t in self.it)

    def canonical(self) -> dict[str, object]:
        """The slot values of the canonical request (each pool's first entry), and the first
        principal's context for a family asked by a signed-in customer."""
        values = {name: POOLS[pool][0][0] for name, pool in self.slots.items()}
        return {**PRINCIPALS[0].values(), **values} if self.principal else values

    def render(self, phrasing: int, values: Mapping[str, object], surface: int = 0) -> str:
        """The request text for phrasing `phrasing` (an index into `texts`)."""
        lang, text = self.texts[phrasing]
        words: dict[str, str] = {}
        for name, pool in self.slots.items():
            entry = next(e for e in POOLS[pool] if e[0] == values[name])
            forms = entry[1] if lang == "en" else entry[2]
            words[name] = forms[surface % len(forms)]
            if name in self.disguise:
                words[name] = self.disguise[name](words[name])
        return text.format(**words)


def step(tool: str, when: int | None = None, **args: object) -> dict[str, object]:
    """One plan step (`when`: run only if that step's result is non-empty)."""
    out: dict[str, object] = {"tool": tool, "args": args}
    if when is not None:
        out["when"] = {"nonempty": when}
    return out


def plan(*steps: dict[str, object], final: str = "", fillers: PlanJson | None = None) -> PlanJson:
    """A plan/1 document (the final_answer step is appended by `parse_plan`)."""
    return {
        "schema": "plan/1",
        "steps": list(steps),
        "fillers": fillers or {},
        "final_message": final,
    }


def ids_of(n: int) -> str:
    """The ids of step `n`'s entries."""
    return "${step" + str(n) + ".entries.*.id}"


def paths_of(n: int) -> str:
    """The paths of step `n`'s entries."""
    return "${step" + str(n) + ".entries.*.path}"


def archive_mail(n: int, version: Version, when: int) -> dict[str, object]:
    """Archive step `n`'s messages: `archive_messages`, or a move once that tool is gone (C3)."""
    if version.no_archive_messages:
        return step("move_messages", when, ids=ids_of(n), folder="archive")
    return step("archive_messages", when, ids=ids_of(n))


def done_status(version: Version) -> str:
    """The status value for finished tasks (renamed by C1)."""
    return "completed" if version.done_renamed else "done"


def task_list_answer(version: Version, n: int = 1) -> str:
    """The answer of a task listing (C4 changes it to name the tasks)."""
    count = "${step" + str(n) + ".count}"
    if version.verbose_tasks:
        return f"Tasks ({count}): ${{step{n}.entries.*.title}}."
    return f"Tasks: {count}."
