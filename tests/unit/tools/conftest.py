"""Fixtures for tool tests: small agent projects written into tmp_path, rasa module hygiene."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

WriteProject = Callable[[dict[str, str]], Path]

# Top-level module names the tests' projects and loaders register.
_PROJECT_MODULES = frozenset(
    {"lib", "tools", "keel_project_tools", "keel_test_load", "keel_test_w"}
)


@pytest.fixture(autouse=True)
def _restore_import_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Undo what loading test projects does to `sys.path` and `sys.modules`."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for key in [k for k in sys.modules if k.split(".")[0] in _PROJECT_MODULES]:
        del sys.modules[key]


@pytest.fixture
def write_project(tmp_path: Path) -> WriteProject:
    """Write {relative path: dedented source} under tmp_path/project and return its root."""
    root = tmp_path / "project"
    root.mkdir()

    def write(files: dict[str, str]) -> Path:
        for relative, text in files.items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            body = textwrap.dedent(text)
            # Triple-quoted sources start with a newline; line 1 is the line after it.
            body = body[1:] if body.startswith("\n") else body
            target.write_text(body, encoding="utf-8")
        importlib.invalidate_caches()
        return root

    return write


@pytest.fixture
def isolated_rasa() -> Iterator[None]:
    """Forget every imported `rasa*` module for the test, and restore them afterwards."""
    saved = {k: v for k, v in sys.modules.items() if k == "rasa" or k.startswith("rasa.")}
    for key in saved:
        del sys.modules[key]
    yield
    for key in [k for k in sys.modules if k == "rasa" or k.startswith("rasa.")]:
        del sys.modules[key]
    sys.modules.update(saved)
