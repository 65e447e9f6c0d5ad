"""Which API key owns a conversation: the key's name is part of the stored conversation id.

A conversation a client calls `c-42`, created with the key named `web`, is stored as
`web/c-42`. A key can only ever address ids under its own name, so it sees its own
conversations and nothing else (another key's `c-42` is a different conversation, and
the same id under another key is simply unknown: 404, never 403, so ids do not leak).
Nothing extra is stored and nothing can drift: the log itself says who owns it.
"""

from __future__ import annotations

SEPARATOR = "/"


def store_key(owner: str, conversation_id: str) -> str:
    """The id the event store uses for `owner`'s conversation `conversation_id`."""
    return f"{owner}{SEPARATOR}{conversation_id}"


def split_key(key: str) -> tuple[str | None, str]:
    """(owner, client id) of a stored id; owner None for logs written outside the server."""
    owner, sep, rest = key.partition(SEPARATOR)
    return (owner, rest) if sep else (None, key)
