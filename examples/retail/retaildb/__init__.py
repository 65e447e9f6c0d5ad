"""The retail example's database: one process-wide copy of `data/db.json`, and its hash.

    from retaildb import current, reset, db_hash

    orders = current()["orders"]   # the live copy the tools read and change
    reset()                        # back to a fresh copy of db.json
    db_hash()                      # SHA-256 of the canonical JSON of the whole database

The tools import this package by name (Keel puts the project root first on `sys.path`).
"""

from retaildb.outputs import failure, success
from retaildb.store import DB_FILE, current, db_hash, fresh_copy, reset

__all__ = ["DB_FILE", "current", "db_hash", "failure", "fresh_copy", "reset", "success"]
