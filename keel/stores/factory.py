"""Open an event store from a URL (`KEEL_DATABASE_URL` style).

| URL | store |
| --- | --- |
| `memory://` | `InMemoryEventStore` (gone when the process ends) |
| `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` | `SqliteEventStore` |
| `sqlite+aiosqlite:///...` | the same |
| `postgresql://user@host/db`, `postgres://...`, `postgresql+asyncpg://...` | `PostgresEventStore` |

Backends are listed here explicitly; the SQL ones share `keel.stores.sql`. Backend modules
are imported only when their URL is used, so memory-only programs never import SQLAlchemy.
"""

from __future__ import annotations

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

            return await SqliteEventStore.open(_sqlite_path(url, prefix), clock=clock)
    if url.startswith(_POSTGRES_PREFIXES):
        from keel.stores.postgres import PostgresEventStore  # lazy: SQLAlchemy, asyncpg

        return await PostgresEventStore.open(url, clock=clock)
    scheme = url.split("://", 1)[0] if "://" in url else url
    raise UnsupportedStoreUrl(
        f"unsupported store URL scheme {scheme!r}; use memory://, sqlite:///path/to/file.db "
        "or postgresql://user@host/database"
    )


def _sqlite_path(url: str, prefix: str) -> str:
    path = url[len(prefix) :]
    if "?" in path:
        raise UnsupportedStoreUrl(f"query parameters are not supported in {url!r}")
    if not path or path == ":memory:" or path.startswith("file:"):
        raise UnsupportedStoreUrl(
            f"{url!r} names no database file; use memory:// for a store in memory"
        )
    return path
