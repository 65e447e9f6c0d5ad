"""How the retail tools answer: the exact strings the reference tools return.

A record is written as `json.dumps(record)` with the default separators and the stored key
order. A failure is a failed `ToolResult` whose error is the message: Keel shows the model
`Error: <message>`, which is the reference's text.
"""

from __future__ import annotations

import json

from keel.tools import ToolResult


def success(value: object) -> ToolResult:
    """A plain string as it is; anything else as `json.dumps(value)`."""
    text = value if isinstance(value, str) else json.dumps(value)
    return ToolResult(llm_response=text)


def failure(message: str) -> ToolResult:
    """The reference's `Error: <message>`, recorded as a failed run."""
    return ToolResult(error=message)
