"""Helpers shared by the MCP tests: the test agents, their environments, child processes."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from depot_server import TOKEN, DepotServer

from keel.errors import DefinitionError
from keel.project.definition import AgentDefinition
from keel.project.load import load_project

AGENTS = Path(__file__).resolve().parent / "agents"


def depot_env(server: DepotServer, token: str = TOKEN) -> dict[str, str]:
    return {"DEPOT_MCP_URL": server.url, "DEPOT_TOKEN": token}


def clock_env() -> dict[str, str]:
    return {"KEEL_TEST_PYTHON": sys.executable, "PATH": os.environ.get("PATH", "")}


def load(path: Path, env: dict[str, str]) -> AgentDefinition:
    """The agent at `path`, loaded with `env` (raises `DefinitionError` on errors)."""
    definition, diagnostics = load_project(path, env=env)
    if definition is None:
        raise DefinitionError(diagnostics)
    return definition


def copy_agent(name: str, target: Path) -> Path:
    """A writable copy of a test agent (to vary its files in one test)."""
    shutil.copytree(AGENTS / name, target)
    return target


def child_processes(marker: str) -> list[int]:
    """Pids of this process's children whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and marker in command:
            found.append(int(entry.name))
    return found
