"""The airline database of this process: one pristine copy of `data/db.json`, one current copy.

`data/db.json` is read once (a plain `json.load`, so every object keeps the key order of the
file, which the JSON tool outputs depend on). The *current* database starts as a shallow
copy of it: its three sections (`flights`, `reservations`, `users`) are new dicts whose
records are the pristine record objects. A tool that changes a record first asks for it
with `writable_user` / `writable_reservation`, which swaps in a deep copy (once per
`reset`); a new reservation is added with `add_reservation`. So `reset()` only copies three
section dicts instead of 3 MB of records, and the pristine records are never written.

`db_hash()` is the data README's hash: SHA-256 of `json.dumps(db, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)` as UTF-8. It is assembled from the canonical
text of each record; the text of a pristine record is computed once and cached, the text of
a record changed since the last `reset` is computed every time. `full_hash(db)` computes the
same value the plain way (tests compare both).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "db.json"
"""The project's copy of the τ-bench airline database."""

SECTIONS = ("flights", "reservations", "users")

Record = dict[str, Any]


class AirlineStore:
    """A pristine database and the current, copy-on-write view of it."""

    def __init__(self, pristine: dict[str, dict[str, Record]]) -> None:
        self._pristine = pristine
        self._text_cache: dict[tuple[str, str], str] = {}
        self._owned: set[tuple[str, str]] = set()
        self.db: dict[str, dict[str, Record]] = {}
        self.enforce_policy = True
        """Whether the write tools apply `airlinedb.policy` (the conformance replay of the
        reference's gold calls turns it off: some gold calls break `policy.md`)."""
        self.cabins: dict[str, str] = {}
        """Reservation id -> the cabin its flights were last priced in, when changed since
        the last `reset` (the stored `cabin` keeps its booked value, as the reference's)."""
        self.reset()

    @classmethod
    def from_file(cls, path: Path = DATA_FILE) -> AirlineStore:
        with path.open(encoding="utf-8") as handle:
            data: dict[str, dict[str, Record]] = json.load(handle)
        return cls(data)

    def reset(self, *, enforce_policy: bool = True) -> None:
        """Forget every change: the current database is the pristine one again."""
        self.enforce_policy = enforce_policy
        self.db = {name: dict(section) for name, section in self._pristine.items()}
        self._owned = set()
        self.cabins = {}

    def _writable(self, section: str, key: str) -> Record | None:
        records = self.db[section]
        record = records.get(key)
        if record is None:
            return None
        if (section, key) not in self._owned:
            record = records[key] = copy.deepcopy(record)
            self._owned.add((section, key))
        return record

    def writable_user(self, user_id: str) -> Record | None:
        """The user record, safe to change (None when there is no such user)."""
        return self._writable("users", user_id)

    def writable_reservation(self, reservation_id: str) -> Record | None:
        """The reservation record, safe to change (None when there is no such reservation)."""
        return self._writable("reservations", reservation_id)

    def add_reservation(self, record: Record) -> None:
        """Store a new reservation under its `reservation_id` (at the end of the section)."""
        key = record["reservation_id"]
        self.db["reservations"][key] = record
        self._owned.add(("reservations", key))

    def db_hash(self) -> str:
        """The canonical hash of the current database (see the module docstring)."""
        parts = ["{"]
        for position, name in enumerate(sorted(self.db)):
            parts.append(("," if position else "") + _key(name) + ":{")
            parts.append(",".join(self._entry(name, key) for key in sorted(self.db[name])))
            parts.append("}")
        parts.append("}")
        return hashlib.sha256("".join(parts).encode("utf-8")).hexdigest()

    def _entry(self, section: str, key: str) -> str:
        """`"<key>":<canonical record>`, cached while the record is the pristine one."""
        if (section, key) in self._owned:
            return _key(key) + ":" + canonical(self.db[section][key])
        cached = self._text_cache.get((section, key))
        if cached is None:
            cached = _key(key) + ":" + canonical(self.db[section][key])
            self._text_cache[(section, key)] = cached
        return cached

    def pristine_hash(self) -> str:
        """`full_hash` of the pristine database (it must never change)."""
        return full_hash(self._pristine)


def canonical(value: object) -> str:
    """The README's canonical JSON text of `value`."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def full_hash(db: Mapping[str, Any]) -> str:
    """The README's hash, computed on the whole object at once."""
    return hashlib.sha256(canonical(db).encode("utf-8")).hexdigest()


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
