"""JSON-ready request bodies: configuration values (read-only mappings, tuples) as plain
dicts and lists, so the provider SDKs can encode them."""

from __future__ import annotations

from collections.abc import Mapping


def plain_json(value: object) -> object:
    """`value` with every mapping a dict and every tuple a list, so `json` can encode it
    (tool schemas and configured extras may be read-only `MappingProxyType`s)."""
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(item) for item in value]
    return value


def extra_body(
    extras: Mapping[str, object], body: Mapping[str, object] | None
) -> dict[str, object] | None:
    """Provider extras with an `extra_body:` mapping merged over them, or None when empty."""
    merged = {**extras, **(body or {})}
    plain = plain_json(merged)
    return plain if isinstance(plain, dict) and plain else None
