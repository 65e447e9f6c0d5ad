"""A small streamable-HTTP MCP server for the tests, written with the official SDK.

`DepotServer` runs an `MCPServer` under uvicorn in a thread on a free port of 127.0.0.1
and counts every tool call it receives, so a test can prove a call never reached it.
`start` waits for readiness by polling the port; `stop` shuts it down; starting again on
the same port simulates a server that came back after a crash.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool

TOKEN = "depot-secret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, *, up: bool, timeout: float = 10.0) -> None:
    """Poll until the port accepts connections (`up`) or refuses them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.2)
            accepting = sock.connect_ex(("127.0.0.1", port)) == 0
        if accepting == up:
            return
        time.sleep(0.01)
    raise TimeoutError(f"port {port} did not come {'up' if up else 'down'}")


class DepotServer:
    """The depot MCP server: reroute, lookup, a failing tool, a slow one, odd schemas."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.port = free_port()
        self.headers: list[str | None] = []
        self.mcp = self._build()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def _build(self) -> MCPServer:
        mcp = MCPServer("depot", log_level="WARNING", tools=self._odd_tools())

        @mcp.tool()
        def reroute(parcel_id: str, depot: int) -> dict[str, Any]:
            """Send a parcel to another depot."""
            self.calls["reroute"] += 1
            return {"parcel_id": parcel_id, "depot": depot, "status": "rerouted"}

        @mcp.tool()
        def lookup(parcel_id: str) -> str:
            """Where a parcel is."""
            self.calls["lookup"] += 1
            return f"Parcel {parcel_id} is at depot 7."

        @mcp.tool()
        def cancel_parcel(parcel_id: str) -> str:
            """Cancel a parcel (always refused by the depot)."""
            self.calls["cancel_parcel"] += 1
            raise ToolError(f"parcel {parcel_id} is already on a truck")

        @mcp.tool()
        async def slow(seconds: float) -> str:
            """Take a while."""
            self.calls["slow"] += 1
            await asyncio.sleep(seconds)
            return "done"

        return mcp

    def _odd_tools(self) -> list[Tool]:
        def ping() -> str:
            self.calls["ping"] += 1
            return "pong"

        def scalar() -> str:
            self.calls["scalar"] += 1
            return "never"

        # `ping` lists no `properties` (the OpenAI Agents SDK #449 case): Keel adds them.
        loose = Tool.from_function(ping, description="Check the depot answers.")
        loose = loose.model_copy(update={"parameters": {"type": "object"}})
        # `scalar` takes no object at all: Keel never offers or calls it.
        odd = Tool.from_function(scalar, description="Not callable by a model.")
        odd = odd.model_copy(update={"parameters": {"type": "object", "properties": []}})
        return [loose, odd]

    def add_tool(self, name: str) -> None:
        """A new tool appears on the server (for list refresh tests)."""

        def fn(parcel_id: str) -> str:
            self.calls[name] += 1
            return f"{name} {parcel_id}"

        self.mcp.add_tool(fn, name=name, description=f"The {name} tool.")

    def start(self) -> None:
        config = uvicorn.Config(
            self._checking_token(self.mcp.streamable_http_app()),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        wait_for_port(self.port, up=True)

    def _checking_token(self, app: Any) -> Any:
        """The app behind a bearer-token check (401 without `Authorization: Bearer TOKEN`)."""

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                auth = dict(scope["headers"]).get(b"authorization")
                self.headers.append(auth.decode() if auth else None)
                if auth != f"Bearer {TOKEN}".encode():
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"no token"})
                    return
            await app(scope, receive, send)

        return guarded

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._server = self._thread = None
        wait_for_port(self.port, up=False)
