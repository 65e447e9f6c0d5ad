"""API keys: parsed from config, kept only as salted SHA-256 digests, checked in constant time.

A key is configured as `name:scope1,scope2:secret` (in `KEEL_API_KEYS`, separated by `;`
or newlines, or one per line in a keys file, `#` starting a comment). The secret may be
given as `sha256:<64 hex digits>`, the digest of salt + secret, when a salt is configured
(`KEEL_API_KEY_SALT`), so a keys file need not hold any secret. Scopes are `chat` (talk
to the agent, see your own conversations) and `admin` (the admin endpoints); they are
independent: an admin-only key cannot chat.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from keel.errors import KeelError

SCOPES = frozenset({"chat", "admin"})
"""Every scope a key can hold."""

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
_DIGEST = re.compile(r"sha256:([0-9a-fA-F]{64})\Z")


class KeyConfigError(KeelError, ValueError):
    """An API key specification cannot be used."""

    code = "keel.server.keys"


@dataclass(frozen=True, kw_only=True, slots=True)
class ApiKey:
    """A configured key: its name, its scopes and the digest of salt + secret."""

    name: str
    scopes: frozenset[str]
    digest: str
    """Hex SHA-256 of salt + secret."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Principal:
    """Who is calling: the key's name (the owner of the conversations it creates) and scopes."""

    name: str
    scopes: frozenset[str]


def digest(salt: bytes, secret: str) -> str:
    """Hex SHA-256 of `salt` followed by the UTF-8 secret."""
    return hashlib.sha256(salt + secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True, slots=True)
class KeyRing:
    """The configured keys and the salt their digests use."""

    salt: bytes
    keys: tuple[ApiKey, ...] = ()

    @classmethod
    def new_salt(cls) -> bytes:
        """A fresh random salt (one per server run when none is configured)."""
        return secrets.token_bytes(16)

    def verify(self, presented: str) -> ApiKey | None:
        """The key whose secret is `presented`, or None.

        Every configured digest is compared (in constant time), whether or not an earlier
        one matched, so the time taken says nothing about which key came close.
        """
        candidate = digest(self.salt, presented).encode("ascii")
        found: ApiKey | None = None
        for key in self.keys:
            if hmac.compare_digest(candidate, key.digest.encode("ascii")):
                found = key
        return found

    def __bool__(self) -> bool:
        return bool(self.keys)


SHAPE = "name:scope1,scope2:key"
"""What one key entry looks like."""


def parse_key(spec: str, salt: bytes, *, salt_configured: bool, where: str = "entry") -> ApiKey:
    """Parse one `name:scopes:secret` entry; raises `KeyConfigError`.

    An entry may hold a secret anywhere (a missing name or colon moves it), so errors name
    the entry by `where` (e.g. `KEEL_API_KEYS entry 2`) and show none of its text but a
    valid key name.
    """
    parts = spec.strip().split(":", 2)
    if len(parts) != 3 or not parts[2]:
        raise KeyConfigError(f"{where} is not {SHAPE} (the entry is not shown: it may be a key)")
    name, scope_text, secret = parts
    if not _NAME.match(name):
        raise KeyConfigError(f"{where}: the key name must be 1-64 of A-Z a-z 0-9 _ . -")
    scopes = frozenset(s.strip() for s in scope_text.split(",") if s.strip())
    if not scopes or scopes - SCOPES:
        raise KeyConfigError(f"{where} (key {name!r}): scopes must be among chat, admin")
    match = _DIGEST.match(secret)
    if match is not None:
        if not salt_configured:
            raise KeyConfigError(
                f"API key {name!r} is given as a digest: set KEEL_API_KEY_SALT to its salt"
            )
        return ApiKey(name=name, scopes=scopes, digest=match.group(1).lower())
    return ApiKey(name=name, scopes=scopes, digest=digest(salt, secret))


def parse_keys(
    text: str, salt: bytes, *, salt_configured: bool = False, source: str = "API keys"
) -> tuple[ApiKey, ...]:
    """Parse entries separated by newlines or `;`; blank entries and `#` comments skipped.
    Errors name the entry as `{source} entry N` (N counts the entries, from 1)."""
    keys: list[ApiKey] = []
    for line in text.splitlines():
        for entry in line.split("#", 1)[0].split(";"):
            if entry.strip():
                where = f"{source} entry {len(keys) + 1}"
                keys.append(parse_key(entry, salt, salt_configured=salt_configured, where=where))
    check_unique(keys)
    return tuple(keys)


def check_unique(keys: Iterable[ApiKey]) -> None:
    """Refuse two keys with one name (`KeyConfigError`)."""
    seen: set[str] = set()
    for key in keys:
        if key.name in seen:
            raise KeyConfigError(f"API key name {key.name!r} is configured twice")
        seen.add(key.name)
