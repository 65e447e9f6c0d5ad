"""`ServerRuntime.reload` (keel run --reload): swapped between turns, the old kept on errors."""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_kit import ACTIVATE_OUTAGE, ALICE, EXAMPLE, GatedModel, ServeFactory

from keel.server.reload import project_revision

OLD_GREETING = "Hi, I'm Wren from Brightwave Broadband."
NEW_GREETING = "Hello from the reloaded Wren."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the support example, to edit."""
    copy = tmp_path / "agent"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".keel", "__pycache__"))
    return copy


def _edit_greeting(project: Path, text: str) -> None:
    responses = project / "responses.yml"
    source = responses.read_text(encoding="utf-8")
    old = "Hi, I'm Wren from Brightwave Broadband. I can help with outages, bills and"
    assert old in source
    responses.write_text(source.replace(old, f"{text} I can help with outages, bills and"))


class _Waiter(logging.Handler):
    """Sets an asyncio event when a `keel.server.reload` record contains `text`."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


@pytest.fixture
def reload_log() -> Iterator[logging.Logger]:
    logger = logging.getLogger("keel.server.reload")
    level = logger.level
    logger.setLevel(logging.INFO)
    yield logger
    logger.setLevel(level)


def _greeting(body: dict[str, object]) -> str:
    messages = body["messages"]
    assert isinstance(messages, list) and messages
    text = messages[0]["text"]
    assert isinstance(text, str)
    return text


async def test_a_reload_waits_for_the_running_turn_then_swaps(
    serve: ServeFactory, project: Path, reload_log: logging.Logger
) -> None:
    model = GatedModel([ACTIVATE_OUTAGE])
    waiting = _Waiter("swapping once 1 running turn(s) end")
    reload_log.addHandler(waiting)
    try:
        async with asyncio.timeout(30), serve(model=model, project=project) as s:
            old_engine, old_revision = s.runtime.engine, s.runtime.revision
            assert old_revision == project_revision(project)
            first = asyncio.ensure_future(
                s.client.post("/v1/conversations/c1/messages", json={"text": "down"}, headers=ALICE)
            )
            await model.called.wait()  # the turn is inside its model call
            _edit_greeting(project, NEW_GREETING)
            reloading = asyncio.ensure_future(s.runtime.reload())
            await waiting.seen.wait()
            # Mid-turn: the new definition is loaded but not swapped in.
            assert s.runtime.engine is old_engine and not reloading.done()
            model.gate.set()
            answered = await first
            assert await reloading is True
            assert s.runtime.engine is not old_engine
            assert s.runtime.revision == project_revision(project) != old_revision
            fresh = await s.client.post(
                "/v1/conversations/c2/messages", json={"text": "/session_start"}, headers=ALICE
            )
    finally:
        reload_log.removeHandler(waiting)
    assert answered.status_code == 200 and answered.json()["stop_reason"] == "end_turn"
    assert OLD_GREETING in _greeting(answered.json())  # the turn ran on the old definition
    assert fresh.status_code == 200
    assert _greeting(fresh.json()).startswith(NEW_GREETING)


async def test_a_broken_project_keeps_the_old_definition_and_logs_why(
    serve: ServeFactory,
    project: Path,
    reload_log: logging.Logger,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with asyncio.timeout(30), serve(project=project) as s:
        old_engine, old_revision = s.runtime.engine, s.runtime.revision
        (project / "responses.yml").write_text("responses:\n  utter_greet: [oops\n")
        with caplog.at_level(logging.INFO, logger="keel.server.reload"):
            assert await s.runtime.reload() is False
        kept = await s.client.post(
            "/v1/conversations/c1/messages", json={"text": "/session_start"}, headers=ALICE
        )
        assert s.runtime.engine is old_engine and s.runtime.revision == old_revision
    lines = [r.getMessage() for r in caplog.records if r.name == "keel.server.reload"]
    assert any(line.startswith("responses.yml:") and "yaml.syntax" in line for line in lines), lines
    assert f"has errors; still serving revision {old_revision}" in lines[-1]
    assert OLD_GREETING in _greeting(kept.json())


async def test_an_unchanged_project_is_not_reloaded(serve: ServeFactory, project: Path) -> None:
    async with asyncio.timeout(30), serve(project=project) as s:
        engine = s.runtime.engine
        (project / "responses.yml").touch()
        assert await s.runtime.reload() is True
        assert s.runtime.engine is engine


def test_what_is_watched_and_what_the_revision_covers(tmp_path: Path) -> None:
    from keel.server.reload import relevant

    root = tmp_path / "agent"
    (root / "skills" / "a").mkdir(parents=True)
    (root / "skills" / "a" / "skill.md").write_text("x", encoding="utf-8")
    (root / "responses.yml").write_text("responses: {}\n", encoding="utf-8")
    for ignored in (".keel/keel.db", ".keel/local-key", "tools/__pycache__/t.cpython-311.pyc"):
        (root / ignored).parent.mkdir(parents=True, exist_ok=True)
        (root / ignored).write_text("state", encoding="utf-8")
    for name in ("agent.db-wal", "responses.yml.swp", "notes.md~", "store.sqlite3"):
        (root / name).write_text("tmp", encoding="utf-8")
    before = project_revision(root)
    for ignored in (".keel/keel.db", "agent.db-wal", "responses.yml.swp", "store.sqlite3"):
        (root / ignored).write_text("changed", encoding="utf-8")
        assert not relevant(str(root / ignored), root)
    assert project_revision(root) == before  # serving (the store, the key) changes nothing
    assert relevant(str(root / "skills" / "a" / "skill.md"), root)
    assert not relevant(str(tmp_path / "elsewhere.yml"), root)
    (root / "skills" / "a" / "skill.md").write_text("y", encoding="utf-8")
    assert project_revision(root) != before


def test_a_reload_imports_the_projects_helper_modules_afresh(tmp_path: Path) -> None:
    import importlib
    import sys

    from keel.server.reload import forget_project_modules

    root = tmp_path / "agent"
    (root / "helpers_h8").mkdir(parents=True)
    (root / "helpers_h8" / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    sys.path.insert(0, str(root))
    try:
        assert importlib.import_module("helpers_h8").VALUE == 1
        # Another size too: a cached .pyc of the same second and size would pass for fresh.
        (root / "helpers_h8" / "__init__.py").write_text("VALUE = 2  # edited\n", encoding="utf-8")
        forget_project_modules(root.resolve())
        assert "helpers_h8" not in sys.modules
        assert "keel.server.reload" in sys.modules  # Keel's own modules stay
        assert importlib.import_module("helpers_h8").VALUE == 2
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("helpers_h8", None)
