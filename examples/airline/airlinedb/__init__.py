"""The airline example's database: the state every airline tool reads and changes.

There is one current database per process. The tools reach it through the functions below;
`conformance.py` and `replay.py` call `reset()` before each task or transcript and compare
`db_hash()` with the expected hash.

    import airlinedb

    airlinedb.reset()
    user = airlinedb.user("mia_li_3668")            # read only
    user = airlinedb.writable_user("mia_li_3668")   # before changing it
    airlinedb.db_hash()                             # 64 hex digits

The package is named `airlinedb` (not `db`) so that the retail example's `retaildb` and
this one can be imported side by side in one process.
"""

from __future__ import annotations

import json
from typing import Any

from airlinedb.policy import Refusal
from airlinedb.store import DATA_FILE, AirlineStore, Record, canonical, full_hash

__all__ = [
    "DATA_FILE",
    "Record",
    "add_reservation",
    "cabin_of",
    "canonical",
    "current",
    "db_hash",
    "dumps",
    "enforced",
    "flights",
    "full_hash",
    "pristine_hash",
    "reservation",
    "reset",
    "set_cabin",
    "store",
    "user",
    "writable_reservation",
    "writable_user",
]

_STORE: AirlineStore | None = None


def store() -> AirlineStore:
    """The process-wide store, loaded from `data/db.json` on first use."""
    global _STORE
    if _STORE is None:
        _STORE = AirlineStore.from_file(DATA_FILE)
    return _STORE


def reset(*, enforce_policy: bool = True) -> None:
    """Start again from a fresh copy of `data/db.json`; `enforce_policy=False` until the
    next reset makes the tools behave as the reference tools do (no `policy.*` refusals)."""
    store().reset(enforce_policy=enforce_policy)


def enforced(problem: Refusal | None) -> Refusal | None:
    """`problem`, unless the policy is off (see `reset`)."""
    return problem if store().enforce_policy else None


def db_hash() -> str:
    """The canonical hash of the current database (the data README's definition)."""
    return store().db_hash()


def pristine_hash() -> str:
    """The hash of `data/db.json` as loaded, computed in full (a self-check)."""
    return store().pristine_hash()


def current() -> dict[str, dict[str, Record]]:
    """The current database (`flights`, `reservations`, `users`); do not change it directly."""
    return store().db


def flights() -> dict[str, Record]:
    """Every flight by number (read only)."""
    return store().db["flights"]


def user(user_id: str) -> Record | None:
    """A user record to read, or None."""
    return store().db["users"].get(user_id)


def reservation(reservation_id: str) -> Record | None:
    """A reservation record to read, or None."""
    return store().db["reservations"].get(reservation_id)


def writable_user(user_id: str) -> Record | None:
    """A user record that may be changed, or None."""
    return store().writable_user(user_id)


def writable_reservation(reservation_id: str) -> Record | None:
    """A reservation record that may be changed, or None."""
    return store().writable_reservation(reservation_id)


def add_reservation(record: Record) -> None:
    """Store a new reservation."""
    store().add_reservation(record)


def cabin_of(record: Record) -> str:
    """The cabin a reservation flies in now: the one its flights were last priced in by
    `update_reservation_flights`, else the booked one. The reference tool does not update
    the stored `cabin` (kept, so database hashes match), so the rules read this instead."""
    return store().cabins.get(record["reservation_id"], str(record["cabin"]))


def set_cabin(reservation_id: str, cabin: str) -> None:
    """Remember the cabin a reservation's flights were priced in (until the next reset)."""
    store().cabins[reservation_id] = cabin


def dumps(value: Any) -> str:
    """Tool-output JSON, written the way the reference tools write it (`json.dumps` defaults:
    `", "` and `": "` separators, ASCII escapes, keys in stored order)."""
    return json.dumps(value)
