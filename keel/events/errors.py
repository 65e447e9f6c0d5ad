"""Errors raised when a stored event cannot be read back.

    StoreError                          (keel.errors)
    └── EventDecodeError                keel.store.decode
        ├── UnknownEventKind            keel.store.decode.unknown_kind
        ├── UnsupportedSchemaVersion    keel.store.decode.version
        └── MalformedEvent              keel.store.decode.malformed

They belong to the `StoreError` family: a log that cannot be decoded is persisted data
this build of Keel cannot use (written by a newer Keel, or damaged).
"""

from keel.errors import StoreError


class EventDecodeError(StoreError):
    """A stored event could not be decoded."""

    code = "keel.store.decode"


class UnknownEventKind(EventDecodeError):
    """The event's `type` names no kind in the registry."""

    code = "keel.store.decode.unknown_kind"


class UnsupportedSchemaVersion(EventDecodeError):
    """The event's `v` is newer than this build, or no upcaster leads from it."""

    code = "keel.store.decode.version"


class MalformedEvent(EventDecodeError):
    """The event's fields are missing, unexpected or of the wrong type."""

    code = "keel.store.decode.malformed"
