"""An MCP `CallToolResult` as a Keel `ToolResult` (pure).

What the model sees: the result's `structuredContent` when there is one (the server's
machine-readable answer), otherwise its content blocks as text, one per line. Text blocks
and embedded text resources give their text; images, audio, blobs and resource links give
a short bracketed note (the model cannot use the bytes). An `isError` result is the tool's
own error: a failed run whose message is that text.
"""

from __future__ import annotations

from collections.abc import Sequence

import mcp_types

from keel.tools.result import ToolResult


def to_tool_result(result: mcp_types.CallToolResult, *, tool: str, server: str) -> ToolResult:
    """The Keel outcome of one MCP call."""
    text = content_text(result.content)
    if result.is_error:
        return ToolResult(error=text or f"MCP tool '{tool}' of server '{server}' reported an error")
    if result.structured_content is not None:
        return ToolResult(llm_response=result.structured_content)
    return ToolResult(llm_response=text)


def content_text(blocks: Sequence[mcp_types.ContentBlock]) -> str:
    """The content blocks as text, one block per line."""
    return "\n".join(_block_text(block) for block in blocks)


def _block_text(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return resource.text
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link {block.uri}]"
    if isinstance(block, mcp_types.ImageContent):
        return f"[image ({block.mime_type})]"
    return f"[audio ({block.mime_type})]"
