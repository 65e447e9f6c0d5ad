"""Watching the served project's files for `keel run --reload`.

`watch_project` waits for changes under the project folder (watchfiles: inotify and its
peers, with a short debounce that folds an editor's save into one batch) and calls back
once per batch; `ServerRuntime.reload` then loads the project again and swaps it in
between turns, or keeps the old definition when the new one has errors. Keel's own state
(`.keel/`: the SQLite store, the local key), SQLite files and their journals, caches and
editor temporary files are not watched, so serving never triggers a reload by itself.

`project_revision` names the files a definition was loaded from: the first 12 hex
digits of a SHA-256 over every watched file's path and content, logged at start and at
each reload (`revision 3f9c0a1b2d4e`), so a log says which version answered.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

    from keel.source.diagnostics import Diagnostic

log = logging.getLogger("keel.server.reload")

IGNORED_DIRS = (
    ".keel",
    "__pycache__",
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".venv",
    ".idea",
    ".vscode",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
)
"""Folders whose changes never reload the project (state, caches, tools' folders)."""

IGNORED_FILES = (
    r"\.py[cod]$",
    r"\.sw.$",
    r"~$",
    r"^\.#",
    r"^\.DS_Store$",
    r"\.(db|sqlite|sqlite3)(-wal|-shm|-journal)?$",
    r"\.tmp$",
    r"^server-\d+\.log$",
)
"""File names (regular expressions) whose changes never reload the project."""

REVISION_DIGITS = 12


def _ignored_dir(name: str) -> bool:
    return name in IGNORED_DIRS


def _ignored_file(name: str) -> bool:
    import re

    return any(re.search(pattern, name) for pattern in IGNORED_FILES)


def watched_files(root: Path) -> Iterator[Path]:
    """The project's files a change to which reloads it, in a stable order."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not _ignored_dir(d))
        for name in sorted(files):
            path = Path(folder) / name
            # Regular files only: reading a named pipe or a socket would block or fail.
            if not _ignored_file(name) and path.is_file():
                yield path


def project_revision(root: Path) -> str:
    """A short digest of the watched files' relative paths and contents."""
    digest = hashlib.sha256()
    for path in watched_files(root):
        try:
            content = path.read_bytes()
        except OSError:  # removed or unreadable between listing and reading
            continue
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()[:REVISION_DIGITS]


def relevant(path: str, root: Path) -> bool:
    """Whether a change at `path` (absolute, under `root`) may change the definition."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return False
    return not any(_ignored_dir(p) for p in parts[:-1]) and not _ignored_file(parts[-1])


async def watch_project(
    root: Path,
    on_change: Callable[[tuple[str, ...]], Awaitable[None]],
    stop: asyncio.Event,
) -> None:
    """Call `on_change(changed paths, relative)` for each batch of changes until `stop` is set."""
    from watchfiles import awatch  # lazy: only `keel run --reload` watches

    def keep(_change: object, path: str) -> bool:
        return relevant(path, root)

    async for changes in awatch(root, watch_filter=keep, stop_event=stop, debounce=400):
        changed = sorted({Path(path).relative_to(root).as_posix() for _kind, path in changes})
        try:
            await on_change(tuple(changed))
        except Exception:  # a reload that failed in an unforeseen way must not stop watching
            log.exception("reloading %s failed", root)


def forget_project_modules(root: Path) -> None:
    """Drop from `sys.modules` every module loaded from a file under `root`, so the next
    load imports the project's helper modules (`lib/...`) from their current source."""
    import sys

    for name, module in list(sys.modules.items()):
        if name == "keel" or name.startswith(("keel.", "keel_project_tools")):
            continue  # Keel itself (a project inside its checkout); tool files are re-run
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or "site-packages" in file:
            continue
        if Path(file).resolve().is_relative_to(root):
            del sys.modules[name]


def log_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    """Each diagnostic as a log line: errors at ERROR, warnings at WARNING, notes at INFO."""
    levels = {"error": logging.ERROR, "warning": logging.WARNING}
    for d in diagnostics:
        text = d.render() if d.severity == "error" else f"{d.render()} ({d.severity})"
        log.log(levels.get(d.severity, logging.INFO), "%s", text)
