"""Finding conversation test files, and the agent project a test file runs against."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from keel.testing.conversation.sink import Sink

AGENT_FILE = "agent.yml"
_TESTS_KEY = re.compile(r"^tests[ \t]*:", re.MULTILINE)
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})


def find_test_files(paths: Iterable[Path]) -> list[Path]:
    """Files named on the command line, and in folders every `*.yml` / `*.yaml` file with a
    top-level `tests:` key (hidden folders skipped), each once, in the order found."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for candidate in sorted(_yaml_files(path)):
                if _has_tests_key(candidate):
                    found.setdefault(candidate, None)
        else:
            found.setdefault(path, None)
    return list(found)


def _yaml_files(folder: Path) -> Iterable[Path]:
    for candidate in folder.rglob("*"):
        relative = candidate.relative_to(folder).parts
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in relative[:-1]):
            continue
        if candidate.suffix in {".yml", ".yaml"} and candidate.is_file():
            yield candidate


def _has_tests_key(path: Path) -> bool:
    try:
        return _TESTS_KEY.search(path.read_text(encoding="utf-8")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def resolve_agent(
    test_path: Path,
    declared: object,
    line: int | None,
    default_agent: Path | None,
    sink: Sink,
) -> Path | None:
    """The agent project for a test file, in this order: its `agent:` key (relative to the
    file), the nearest folder above the file holding `agent.yml`, `default_agent`."""
    if declared is not None:
        if not isinstance(declared, str) or not declared:
            sink.error("test.agent.invalid", line, "agent takes a path to an agent project")
            return None
        return _checked(test_path.parent / declared, line, sink)
    for folder in test_path.resolve().parents:
        if (folder / AGENT_FILE).is_file():
            return folder
    if default_agent is not None:
        return _checked(default_agent, line, sink)
    sink.error(
        "test.agent.missing",
        line,
        f"no agent project: add `agent: <path>`, put the file inside a folder with {AGENT_FILE}, "
        "or pass --agent",
    )
    return None


def _checked(path: Path, line: int | None, sink: Sink) -> Path | None:
    folder = path.parent if path.name == AGENT_FILE else path
    if not (folder / AGENT_FILE).is_file():
        sink.error(
            "test.agent.not_found", line, f"{path} is not an agent project (no {AGENT_FILE})"
        )
        return None
    return folder.resolve()
