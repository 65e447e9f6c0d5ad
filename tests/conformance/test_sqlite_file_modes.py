"""SQLite files are private: the log holds personal data in clear (a PIN, a postcode).

Whatever the umask, a database file and its `-wal` / `-shm` companions are 0600 and a
folder Keel creates for them (`.keel/` by default) is 0700. An existing `.keel/` and
existing database files that others can read are tightened; any other existing folder is
the operator's and left as it is (docs/deploy.md).
"""

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from keel.events.model import SkillActivated
from keel.stores.sqlite import SqliteEventStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """A umask that lets everyone read new files (what a careless host has)."""
    previous = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(previous)


async def _write(file: Path) -> None:
    store = await SqliteEventStore.open(file)
    try:
        await store.append("c1", 0, [SkillActivated(skill_id="s")])
        companions = [Path(f"{file}{suffix}") for suffix in ("-wal", "-shm")]
        assert all(p.exists() for p in companions)  # WAL mode: both exist while open
        assert [mode(p) for p in companions] == [0o600, 0o600]
    finally:
        await store.close()


async def test_a_new_store_is_private(tmp_path: Path) -> None:
    file = tmp_path / "app" / ".keel" / "keel.db"
    await _write(file)
    assert mode(file.parent) == 0o700
    assert mode(file) == 0o600


async def test_an_existing_keel_folder_and_database_are_tightened(tmp_path: Path) -> None:
    folder = tmp_path / ".keel"
    folder.mkdir(mode=0o775)
    folder.chmod(0o775)
    file = folder / "keel.db"
    sqlite3.connect(file).close()
    file.chmod(0o664)
    await _write(file)
    assert mode(folder) == 0o700
    assert mode(file) == 0o600


async def test_another_existing_folder_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o755)
    await _write(folder / "events.db")
    assert mode(folder) == 0o755
    assert mode(folder / "events.db") == 0o600
