"""Reading gazetteers: text files of a project, one name per line (`#` starts a comment).

Read once per file and modification time, then kept in memory.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from keel.errors import KeelError


class GazetteerError(KeelError):
    """A gazetteer file named by an `extract:` attribute cannot be read."""

    code = "keel.extract.gazetteer"


def load_gazetteer(root: Path, relative: str) -> tuple[str, ...]:
    """The names listed in `root / relative`; raises `GazetteerError` when unreadable."""
    path = (root / relative).resolve()
    try:
        stamp = path.stat().st_mtime_ns
    except OSError as exc:
        raise GazetteerError(f"gazetteer {relative} cannot be read: {exc.strerror}") from None
    return _read(path, stamp)


@lru_cache(maxsize=64)
def _read(path: Path, stamp: int) -> tuple[str, ...]:
    del stamp  # part of the cache key only
    names: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        name = line.split("#", 1)[0].strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)
