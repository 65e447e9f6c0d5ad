"""The bench world: tasks, files, a mailbox, a calendar, settings and orders, as plain records.

A turn runs on a fresh copy of the day's baseline (`World.baseline(today)`), so every system
starts each turn from the same state and a turn's outcome is its answer plus `changes()`,
the records it added, replaced or removed. Records are immutable; tools replace them, so a
change is found by identity against the baseline. Everything is a function of the date.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, timedelta

TASK_TITLES = ("buy milk", "call the plumber", "renew passport", "book dentist", "pay rent")
TAGS = ("work", "home", "urgent", "errands")
FILE_FOLDERS = ("/docs", "/projects/alpha", "/projects/beta", "/photos", "/tmp")
FILE_STEMS = (("report", "pdf"), ("notes", "txt"), ("build", "log"), ("beach", "jpg"))
FILE_STEMS += (("cache", "tmp"), ("budget", "pdf"))
SENDERS = ("alice@acme.io", "bob@acme.io", "carla@example.it", "dan@example.com")
SPAMMERS = ("promo@deals.biz", "win@lottery.example")
TOPICS = ("invoice", "meeting", "contract", "holiday")
FIXED_DATES = ("2026-03-05", "2026-03-10", "2026-04-01")
EVENT_TITLES = ("team sync", "dentist", "project review")
CUSTOMERS = ("eve@shop.io", "frank@shop.io", "gina@shop.io", "hal@shop.io", "ivy@shop.io")
ORDER_IDS = tuple(f"W{n}" for n in (*range(10, 100), *range(100, 1000, 10)))
PRODUCTS = (
    ("desk lamp", 39), ("office chair", 189), ("water bottle", 15), ("backpack", 59),
    ("headphones", 99), ("yoga mat", 25), ("coffee grinder", 45), ("bike helmet", 65),
    ("rain jacket", 120), ("phone case", 19), ("notebook", 6), ("tea kettle", 35),
)  # fmt: skip
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
"""The store's two cancellation reasons (tau-bench retail's)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Principal:
    """A signed-in customer of the shop: the context a request is made in.

    The agent knows the customer from the conversation, as the retail agent does: its
    memory holds the customer's id (e-mail) and name, and an earlier turn looked the
    customer up (`profile`: name, address, orders). Nothing of one principal may reach
    another's answer, calls or effects (`secrets`)."""

    email: str
    name: str
    address: str
    orders: tuple[str, ...]
    """Tau-bench style order ids (`W` and 7 digits); the first is the latest order."""

    @property
    def first(self) -> str:
        return self.name.split()[0]

    def memory(self) -> dict[str, object]:
        """The memory entries the skill may read in this customer's conversation."""
        return {"user.customer": self.email, "user.name": self.name}

    def profile(self) -> str:
        """The earlier turn's look-up of the customer (a tool output the model read)."""
        orders = [{"order_id": o, "status": "pending"} for o in self.orders]
        record = {"name": self.name, "email": self.email, "address": self.address}
        return json.dumps({**record, "orders": orders})

    def values(self) -> dict[str, object]:
        """What the planner takes from this customer's context (`me`: their id)."""
        return {"me": self.email, "me_first": self.first, "me_order": self.orders[0]}

    def secrets(self) -> tuple[str, ...]:
        """Everything that identifies this customer or their data."""
        last = self.name.split()[-1]
        return (self.email, self.name, self.first, last, self.address, *self.orders)


PRINCIPALS = (
    Principal(
        email="yusuf@shop.io",
        name="Yusuf Rossi",
        address="12 Elm Street, Austin",
        orders=("W7044833", "W9474165", "W2378156"),
    ),
    Principal(
        email="mei@shop.io",
        name="Mei Tanaka",
        address="48 Oak Avenue, Denver",
        orders=("W5199551", "W8732376", "W3361024"),
    ),
    Principal(
        email="omar@shop.io",
        name="Omar Haddad",
        address="7 Pine Road, Boston",
        orders=("W6102857", "W4410283", "W1837492"),
    ),
    Principal(
        email="lena@shop.io",
        name="Lena Novak",
        address="90 Birch Lane, Seattle",
        orders=("W2947510", "W7725049", "W5583316"),
    ),
)
PRINCIPAL_BY_EMAIL = {p.email: p for p in PRINCIPALS}


@dataclass(frozen=True, slots=True)
class Task:
    id: int
    title: str
    status: str
    tag: str
    due: str


@dataclass(frozen=True, slots=True)
class File:
    path: str
    size: int
    modified: str


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    folder: str
    sender: str
    subject: str
    date: str


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    title: str
    date: str
    time: str


@dataclass(frozen=True, slots=True)
class Order:
    order_id: str
    customer: str
    status: str
    amount: int
    address: str = ""
    reason: str = ""
    """Why it was cancelled (one of `CANCEL_REASONS`; empty when not given)."""


@dataclass(slots=True)
class World:
    """Mutable containers of immutable records; `copy` is cheap (shallow)."""

    today: date
    tasks: dict[int, Task] = field(default_factory=dict)
    files: dict[str, File] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)
    events: dict[str, Event] = field(default_factory=dict)
    settings: dict[str, bool] = field(default_factory=dict)
    orders: dict[str, Order] = field(default_factory=dict)
    outbox: list[tuple[str, str]] = field(default_factory=list)

    def copy(self) -> World:
        """A copy whose containers can change without touching this world."""
        return World(
            today=self.today,
            tasks=dict(self.tasks),
            files=dict(self.files),
            messages=dict(self.messages),
            events=dict(self.events),
            settings=dict(self.settings),
            orders=dict(self.orders),
            outbox=list(self.outbox),
        )

    def day(self, offset: int) -> str:
        """The ISO date `offset` days from today."""
        return (self.today + timedelta(days=offset)).isoformat()

    def changes(self, base: World) -> tuple[object, ...]:
        """What differs from `base` (added, replaced or removed records), in a stable order."""
        out: list[object] = []
        for name in ("tasks", "files", "messages", "events", "settings", "orders"):
            now, before = getattr(self, name), getattr(base, name)
            if now == before:
                continue
            for key, value in now.items():
                if before.get(key) is not value and before.get(key) != value:
                    out.append((name, key, repr(value)))
            out.extend((name, key, "removed") for key in before if key not in now)
        out.extend(("outbox", i, repr(m)) for i, m in enumerate(self.outbox[len(base.outbox) :]))
        return tuple(sorted(out, key=repr))

    @staticmethod
    def baseline(today: date) -> World:
        """The day's starting state (a pure function of the date)."""
        world = World(today=today)
        _tasks(world)
        _files(world)
        _messages(world)
        _calendar(world)
        world.settings = {
            "notifications": True,
            "dark_mode": False,
            "auto_backup": True,
            "location_sharing": False,
        }
        for i, oid in enumerate(ORDER_IDS):
            world.orders[oid] = Order(oid, CUSTOMERS[i % len(CUSTOMERS)], "open", 20 + i % 50)
        for p, principal in enumerate(PRINCIPALS):
            for k, oid in enumerate(principal.orders):
                amount = 30 + 17 * p + 11 * k
                world.orders[oid] = Order(
                    oid, principal.email, "pending", amount, principal.address
                )
        return world


def _tasks(world: World) -> None:
    for i in range(1, 51):
        world.tasks[i] = Task(
            id=i,
            title=f"{TASK_TITLES[i % len(TASK_TITLES)]} ({i})",
            status="done" if i % 3 == 0 else "open",
            tag=TAGS[i % len(TAGS)],
            due=world.day(i % 7 - 3),
        )


def _files(world: World) -> None:
    for f, folder in enumerate(FILE_FOLDERS):
        for s, (stem, ext) in enumerate(FILE_STEMS):
            for k in (1, 2):
                path = f"{folder}/{stem}{k}.{ext}"
                age = (f + 3 * s + 5 * k) % 11
                world.files[path] = File(path, 100 * (s + 1) + k, world.day(-age))


def _messages(world: World) -> None:
    n = 0
    for s, sender in enumerate(SENDERS):
        for age in (0, 1, 4, 12):
            for copy in (0, 1):
                n += 1
                topic = TOPICS[(s + age + copy) % len(TOPICS)]
                mid = f"m{n:03d}"
                world.messages[mid] = Message(mid, "inbox", sender, topic, world.day(-age))
    for s, sender in enumerate(SPAMMERS):
        for age in (0, 1, 4):
            n += 1
            mid = f"m{n:03d}"
            world.messages[mid] = Message(mid, "spam", sender, "offer", world.day(-age - s))
    for s, sender in enumerate(SENDERS):
        n += 1
        mid = f"m{n:03d}"
        world.messages[mid] = Message(mid, "sent", sender, TOPICS[s], world.day(-2))


def _calendar(world: World) -> None:
    days = (*FIXED_DATES, world.day(0), world.day(1))
    n = 0
    for d, day in enumerate(days):
        for k in (0, 1):
            n += 1
            eid = f"e{n:02d}"
            title = EVENT_TITLES[(d + k) % len(EVENT_TITLES)]
            world.events[eid] = Event(eid, title, day, ("09:00", "15:30")[k])
