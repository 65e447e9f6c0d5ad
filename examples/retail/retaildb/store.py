"""Load `data/db.json` once, keep a current copy, reset it, hash it.

`json` keeps the file's key order (the tools' JSON outputs list keys in stored order) and
the int / float distinction of every number (the hash writes `100.0` and `100` apart).
Fresh copies are made from a `marshal` image of the parsed file (same values, same order,
about twice as fast as parsing the JSON again).
"""

from __future__ import annotations

import hashlib
import json
import marshal
from functools import cache
from pathlib import Path
from typing import Any

DB_FILE = Path(__file__).resolve().parents[1] / "data" / "db.json"
"""The pristine database: `{"orders", "products", "users"}`."""

Database = dict[str, Any]

_state: dict[str, Database] = {}


@cache
def _pristine_image() -> bytes:
    return marshal.dumps(json.loads(DB_FILE.read_bytes()))


def fresh_copy() -> Database:
    """A new, independent copy of the database as stored in `db.json`."""
    loaded: Database = marshal.loads(_pristine_image())
    return loaded


def current() -> Database:
    """The database the tools work on (a fresh copy on first use)."""
    database = _state.get("db")
    if database is None:
        database = _state["db"] = fresh_copy()
    return database


def reset() -> None:
    """Replace the current database with a fresh copy of `db.json`."""
    _state["db"] = fresh_copy()


def db_hash(database: Database | None = None) -> str:
    """SHA-256 (hex) of the database as canonical JSON: keys sorted at every level, no
    whitespace, non-ASCII as itself, UTF-8 (the τ-bench data README's definition)."""
    text = json.dumps(
        current() if database is None else database,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
