"""Why an MCP tool call could not be carried out.

Both are `ToolError`s raised from inside the tool call, so the dispatcher turns them into a
failed run the model sees (`is_error: true`, `error_code` = the class's `code`). A tool
that answers with an `isError` result is not an exception: it is the tool's own error.
"""

from __future__ import annotations

from keel.errors import ToolError


class McpServerUnavailable(ToolError):
    """The server could not be reached, or its connection was lost during the call.

    A lost connection is restarted on the next use of the server. `diagnostic` is the code
    `keel validate` and startup report it under.
    """

    code = "mcp.server_unavailable"

    def __init__(self, message: str, *, diagnostic: str = "mcp.server.unreachable") -> None:
        super().__init__(message)
        self.diagnostic = diagnostic


class McpCallFailed(ToolError):
    """The server answered the call with a protocol error (unknown tool, bad params...)."""

    code = "mcp.call_failed"
