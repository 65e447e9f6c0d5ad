"""The local API key of `keel run`, kept in `.keel/local-key` across restarts.

When no API key is configured, `keel run` serves on a loopback address with a key of its
own (scopes chat and admin). The key is written once to `.keel/local-key` of the current
directory (mode 0600, in a folder made 0700) and read back by the next run, so a browser
tab opened with `#key=...` keeps working after a restart. `--new-key` replaces it. A file
that others may read (any group or other permission bit) is not trusted: a new key is
made. When the file cannot be written (a read-only folder) the run keeps its key in
memory only and says so.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

KEY_FILE = Path(".keel") / "local-key"
"""Where the key is kept, relative to the directory `keel run` starts in."""
FILE_MODE = 0o600
PREFIX = "keel-local-"
_SHAPE = re.compile(r"keel-local-[A-Za-z0-9_-]{16,128}\Z")


@dataclass(frozen=True, kw_only=True, slots=True)
class LocalKey:
    """The key this run serves with, where it is kept, and how it came to be."""

    secret: str
    path: Path | None
    """The file holding it; None when it could not be written (this run only)."""
    origin: str
    """`kept` (read back from the file), `new` (first run, or --new-key) or `replaced`."""
    note: str = ""
    """Why a kept key was replaced, or why the key is not kept; empty otherwise."""


def new_secret() -> str:
    """A fresh local key (`keel-local-` and 32 URL-safe characters)."""
    return f"{PREFIX}{secrets.token_urlsafe(24)}"


def local_key(cwd: Path, *, renew: bool = False) -> LocalKey:
    """The key kept under `cwd` (made and written when missing, unusable or `renew`)."""
    path = (cwd / KEY_FILE).resolve()
    note = ""
    if not renew:
        kept, note = _read(path)
        if kept is not None:
            return LocalKey(secret=kept, path=path, origin="kept")
    secret = new_secret()
    try:
        _write(path, secret)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return LocalKey(
            secret=secret, path=None, origin="new", note=f"{path} cannot be written ({reason})"
        )
    return LocalKey(secret=secret, path=path, origin="replaced" if note else "new", note=note)


def _read(path: Path) -> tuple[str | None, str]:
    """(the kept key, "") or (None, why the file is not used; "" when there is none)."""
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path} could not be read ({type(exc).__name__})"
    if stat.S_IMODE(info.st_mode) & 0o077:
        return None, f"{path} was readable by others (mode {stat.S_IMODE(info.st_mode):o})"
    if not _SHAPE.match(text):
        return None, f"{path} did not hold a local key"
    return text, ""


def _write(path: Path, secret: str) -> None:
    """Write `secret` to `path` with mode 0600, atomically (a temporary file renamed)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)  # the umask may have cleared bits; never adds any
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            descriptor = -1
            out.write(secret + "\n")
        os.replace(temporary, path)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        temporary.unlink(missing_ok=True)
        raise
