"""The turn stream: Zipf family popularity, request variants, near misses, changes, feedback.

Deterministic for a seed. Family popularity is Zipf(1.1) over `POPULARITY` (rank 1 first);
within a family 50 % exact repeats of the canonical request, 30 % paraphrases (English and
Italian), 20 % slot variants (the canonical phrasing with other values, dates in other
formats); 10 % of turns are replaced by a near miss of the drawn family (one of its twins,
in the twin's canonical phrasing with the same values). Four changes happen at fixed
fractions of the stream; 5 % of turns carry explicit feedback, 5 % of which is flipped.

Then a share of the turns (`adversarial`, 15 % by default; drawn with a generator of its
own, so the other turns are the ones the stream had without them) is replaced by requests
of the adversarial families (`family_adversarial`): a signed-in customer drawn uniformly
from `world.PRINCIPALS`, a base family drawn with weight 1 + its number of twins (so each
twin is about as frequent as the next); 35 % the canonical request with
that customer's values (customers without slots send the same words), 15 % a paraphrase,
15 % other values of that customer (another of their orders, the other reason), 35 % one
of the base's adversarial twins.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from families import POOLS, Family, Twin
from family_adversarial import ADVERSARIAL, BASES, INJECTION_SLOTS, TWINS
from family_compound import COMPOUND
from family_files import CALENDAR, FILES
from family_mail import MAIL
from family_tasks import ORDERS, SETTINGS, TASKS
from tools import Version
from world import PRINCIPALS, Principal

BY_NAME: dict[str, Family] = {
    f.name: f
    for f in (*TASKS, *SETTINGS, *ORDERS, *FILES, *CALENDAR, *MAIL, *COMPOUND, *ADVERSARIAL)
}
ADVERSARIAL_NAMES = frozenset(f.name for f in ADVERSARIAL)
ADVERSARIAL_SHARE = 0.15
POPULARITY: tuple[str, ...] = (
    "list_open_tasks", "complete_task", "mail_window", "enable_feature", "list_files",
    "delete_task", "events_today", "archive_mail_from", "show_task", "cancel_order",
    "mail_from", "disable_feature", "read_file", "delete_files_glob", "morning_brief",
    "send_note", "list_files_glob", "create_task", "order_status", "empty_spam",
    "summarise_mail", "reopen_task", "search_mail", "triage_sender", "events_on_date",
    "archive_files_glob", "tasks_due_today", "delete_file", "list_done_tasks",
    "email_open_tasks", "feature_status", "mail_about_money", "move_file", "mail_from_window",
    "task_batch", "orders_of",
    "delete_mail_from_window", "spam_window", "refund_order", "tasks_tagged",
    "complete_and_delete", "recent_files", "create_event", "list_files_excluding",
    "cleanup_and_report", "events_tomorrow", "delete_two_tasks", "dont_cancel_order",
    "cancel_event", "tasks_due_tomorrow", "office_day",
)  # fmt: skip
ZIPF_S = 1.1
START = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)
TURN_SECONDS = 36.0
CHANGES = (
    (0.30, "C1 contract edit (list_tasks status done -> completed)", True),
    (0.50, "C2 sibling tool added (summarize_messages)", False),
    (0.65, "C3 tool removed (archive_messages)", False),
    (0.80, "C4 planner logic change (task-list answers name the tasks)", False),
)
"""(fraction of the stream, what changes, whether the Metnos operator bumps the epoch)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Request:
    """One user request with its labels."""

    family: str
    values: Mapping[str, object]
    text: str
    lang: str
    kind: str
    """`exact`, `paraphrase`, `slot` or `near_miss`."""
    base: str
    """The family drawn from the popularity law (differs from `family` for a near miss)."""
    twin: str = ""
    """For a near miss: polarity, verb, object, number, temporal, negation, extra_clause;
    for an adversarial twin: retraction, correction, second_id, lookalike, injection."""
    principal: str = ""
    """The signed-in customer who asks (their e-mail), for the adversarial families."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Change:
    """A catalog or logic change at a fixed turn."""

    turn: int
    name: str
    version: Version
    bump_epoch: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class Turn:
    """One turn of the stream."""

    index: int
    now: float
    request: Request
    feedback: bool = False
    """The user gives explicit feedback on this turn."""
    flip: bool = False
    """That feedback is mislabelled (label noise)."""
    draw: float = 0.0
    """The user model's random draw for implicit signals (the same for every system)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Stream:
    turns: tuple[Turn, ...]
    changes: tuple[Change, ...] = field(default_factory=tuple)

    def version_at(self, index: int) -> Version:
        """The catalog/logic version in force at turn `index`."""
        version = Version()
        for change in self.changes:
            if change.turn <= index:
                version = change.version
        return version


def _changes(n: int) -> tuple[Change, ...]:
    flags = ("done_renamed", "summarize", "no_archive_messages", "verbose_tasks")
    version, out = Version(), []
    for (fraction, name, bump), flag in zip(CHANGES, flags, strict=True):
        version = replace(version, **{flag: True})
        out.append(Change(turn=int(n * fraction), name=name, version=version, bump_epoch=bump))
    return tuple(out)


def _other_values(family: Family, rng: random.Random) -> dict[str, object]:
    canonical = family.canonical()
    for _ in range(8):
        values = {n: rng.choice(POOLS[p])[0] for n, p in family.slots.items()}
        if values != canonical:
            return values
    return canonical


def _variant(family: Family, rng: random.Random) -> Request:
    draw = rng.random()
    values = family.canonical()
    if draw < 0.5:
        kind, phrasing, surface = "exact", 0, 0
    elif draw < 0.8 or not family.slots:
        kind, phrasing, surface = "paraphrase", rng.randrange(1, len(family.texts)), 0
    else:
        kind, phrasing, surface = "slot", 0, rng.randrange(3)
        values = _other_values(family, rng)
    lang = family.texts[phrasing][0]
    text = family.render(phrasing, values, surface)
    return Request(
        family=family.name, values=values, text=text, lang=lang, kind=kind, base=family.name
    )


def _near_miss(family: Family, twin: Twin) -> Request:
    target = BY_NAME[twin.family] if twin.family else family
    base_values = family.canonical()
    values = {
        n: twin.values.get(n, base_values.get(n, target.canonical()[n])) for n in target.slots
    }
    return Request(
        family=target.name,
        values=values,
        text=target.render(0, values),
        lang="en",
        kind="near_miss",
        base=family.name,
        twin=twin.kind,
    )


def _principal_values(
    family: Family, who: Principal, order: str, rng: random.Random
) -> dict[str, object]:
    """The slot values of `family` for customer `who` asking about `order` (the reason
    drawn; a second order is another of theirs, or another customer's in an injection)."""
    others = [o for o in who.orders if o != order]
    if family.name in INJECTION_SLOTS:
        second = rng.choice([p for p in PRINCIPALS if p is not who]).orders[0]
    else:
        second = others[0]
    pool = {"order": order, "order2": second, "reason": POOLS["reason"][0][0]}
    return {**who.values(), **{name: pool[name] for name in family.slots}}


def adversarial_request(rng: random.Random) -> Request:
    """One request of the adversarial families (see the module docstring)."""
    who = rng.choice(PRINCIPALS)
    base = rng.choices(BASES, [1 + len(TWINS[b.name]) for b in BASES])[0]
    twins = TWINS[base.name]
    draw = rng.random()
    order, family, phrasing, kind, twin = who.orders[0], base, 0, "exact", ""
    values = _principal_values(base, who, order, rng)
    if 0.5 <= draw < 0.65 and base.slots:
        kind, order = "slot", rng.choice(who.orders[1:])
        values = _principal_values(base, who, order, rng)
        if "reason" in values:
            values["reason"] = POOLS["reason"][1][0]
    elif draw >= 0.65 and twins:
        kind, (twin, family) = "near_miss", rng.choice(twins)
        values = _principal_values(family, who, order, rng)
    elif draw >= 0.35:
        kind, phrasing = "paraphrase", rng.randrange(1, len(base.texts))
    lang = family.texts[phrasing][0]
    return Request(
        family=family.name,
        values=values,
        text=family.render(phrasing, values),
        lang=lang,
        kind=kind,
        base=base.name,
        twin=twin,
        principal=who.email,
    )


def build_stream(n: int, seed: int = 9, adversarial: float = ADVERSARIAL_SHARE) -> Stream:
    """`n` turns, deterministic for `seed`; a share `adversarial` of them is replaced by
    requests of the adversarial families."""
    rng = random.Random(seed)
    other = random.Random(seed * 7919 + 23)  # the adversarial draws; `rng` stays as it was
    weights = [1 / rank**ZIPF_S for rank in range(1, len(POPULARITY) + 1)]
    start = START.timestamp()
    turns: list[Turn] = []
    for index in range(n):
        family = BY_NAME[rng.choices(POPULARITY, weights)[0]]
        request = _variant(family, rng)
        if rng.random() < 0.10 and family.twins:
            request = _near_miss(family, rng.choice(family.twins))
        feedback = rng.random() < 0.05
        if other.random() < adversarial:
            request = adversarial_request(other)
        turns.append(
            Turn(
                index=index,
                now=start + index * TURN_SECONDS,
                request=request,
                feedback=feedback,
                flip=feedback and rng.random() < 0.05,
                draw=rng.random(),
            )
        )
    return Stream(turns=tuple(turns), changes=_changes(n))


def check_families() -> list[str]:
    """Problems with the family tables (unknown twins, unrendered slots)."""
    problems = [f"{name} is not a family" for name in POPULARITY if name not in BY_NAME]
    problems += [
        f"{name} has no rank"
        for name in BY_NAME
        if name not in POPULARITY and name not in ADVERSARIAL_NAMES
    ]
    for family in BY_NAME.values():
        problems += [
            f"{family.name}: twin {t.family}"
            for t in family.twins
            if t.family and t.family not in BY_NAME
        ]
        for twin in family.twins:
            target = BY_NAME.get(twin.family or family.name, family)
            for name, value in twin.values.items():
                pool = POOLS[target.slots[name]]
                if all(e[0] != value for e in pool):
                    problems.append(f"{family.name}: twin value {value!r} not in its pool")
        for phrasing in range(len(family.texts)):
            text = family.render(phrasing, family.canonical())
            if "{" in text:
                problems.append(f"{family.name}: {text}")
    return problems
