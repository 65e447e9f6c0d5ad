"""Store errors beyond `keel.errors.StoreError` and `ConcurrencyConflict`.

StoreError                      (keel.errors)
├── UnsupportedStoreUrl         keel.store.url
└── StoreSchemaTooNew           keel.store.schema_too_new
"""

from keel.errors import StoreError


class UnsupportedStoreUrl(StoreError):
    """`open_store` was given a URL whose scheme or shape it does not know."""

    code = "keel.store.url"


class StoreSchemaTooNew(StoreError):
    """The database was migrated by a newer Keel; this one must not write to it."""

    code = "keel.store.schema_too_new"
