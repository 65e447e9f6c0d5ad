"""Persistence: the `EventStore` port and its backends.

* `keel.stores.port`: `EventStore` (Protocol), `StoredEvent`, `ConversationSummary`;
* `keel.stores.memory`: `InMemoryEventStore`, the reference implementation and test fake;
* `keel.stores.sql` + `keel.stores.sqlite` / `keel.stores.postgres`: the SQL layer and its
  SQLite (hot path on `sqlite3`, threads in `keel.stores.sqlite_threads`) and PostgreSQL
  (hot path on asyncpg) backends; `keel.stores.tables` and `keel.stores.migrations` hold
  the schema;
* `keel.stores.locks`: the in-process per-conversation locks behind `conversation_lock`;
* `keel.stores.factory`: `open_store(url)`;
* `keel.stores.conformance`: the store contract as reusable checks.

Importing this package does not import SQLAlchemy; import the backend modules for that.
"""
