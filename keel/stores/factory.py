"""Open an event store from a URL (`KEEL_DATABASE_URL` style).

| URL | store |
| --- | --- |
| `memory://` | `InMemoryEventStore` (gone when the process ends) |
| `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` | `SqliteEventStore` |
| `sqlite:///path.db?synchronous=full` (or `normal`, the default) | the same, synced per commit |
| `sqlite+aiosqlite:///...` | the same |
| `postgresql://user@host/db`, `postgres://...`, `postgresql+asyncpg://...` | `PostgresEventStore` |

Backends are listed here explicitly; the SQL ones share `keel.stores.sql`. Backend modules
are imported only when their URL is used, so memory-only programs never import SQLAlchemy.
"""

from __future__ import annotations

from typing import Literal

from keel.ids import Clock
from keel.stores.errors import UnsupportedStoreUrl
from keel.stores.memory import InMemoryEventStore
from keel.stores.port import EventStore

_SQLITE_PREFIXES = ("sqlite:///", "sqlite+aiosqlite:///")
_POSTGRES_PREFIXES = ("postgresql://", "postgres://", "postgresql+asyncpg://")


async def open_store(url: str, *, clock: Clock | None = None) -> EventStore:
    """Open the store `url` names, creating and migrating it when needed."""
    if url == "memory://":
        return InMemoryEventStore(clock=clock)
    for prefix in _SQLITE_PREFIXES:
        if url.startswith(prefix):
            from keel.stores.sqlite import SqliteEventStore  # lazy: SQLAlchemy, aiosqlite

            path, synchronous = _sqlite_path(url, prefix)
            return await SqliteEventStore.open(path, clock=clock, synchronous=synchronous)
    if url.startswith(_POSTGRES_PREFIXES):
        from keel.stores.postgres import PostgresEventStore  # lazy: SQLAlchemy, asyncpg

        return await PostgresEventStore.open(url, clock=clock)
    scheme = url.split("://", 1)[0] if "://" in url else url
    raise UnsupportedStoreUrl(
        f"unsupported store URL scheme {scheme!r}; use memory://, sqlite:///path/to/file.db "
        "or postgresql://user@host/database"
    )


def _sqlite_path(url: str, prefix: str) -> tuple[str, Literal["NORMAL", "FULL"] | None]:
    """The file of a SQLite URL and its `synchronous` setting (None: the default)."""
    path, _, query = url[len(prefix) :].partition("?")
    synchronous: Literal["NORMAL", "FULL"] | None = None
    if query:
        name, _, value = query.partition("=")
        if name != "synchronous" or value.upper() not in ("NORMAL", "FULL"):
            raise UnsupportedStoreUrl(
                f"unsupported query parameters in {url!r}; SQLite URLs take only "
                "?synchronous=full or ?synchronous=normal"
            )
        synchronous = "FULL" if value.upper() == "FULL" else "NORMAL"
    if not path or path == ":memory:" or path.startswith("file:"):
        raise UnsupportedStoreUrl(
            f"{url!r} names no database file; use memory:// for a store in memory"
        )
    return path, synchronous
