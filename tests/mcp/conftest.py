"""Fixtures of the MCP tests: the depot HTTP server on a free port of 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from depot_server import DepotServer


@pytest.fixture
def depot() -> Iterator[DepotServer]:
    """The depot server, running on a free port of 127.0.0.1."""
    server = DepotServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
