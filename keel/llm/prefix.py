"""How much of a request repeats the previous one's prefix, and the prompt cache key.

Providers cache prompts by prefix: a request whose first N tokens are byte-identical to an
earlier request's reads those N tokens from the cache (cheaper and faster). Keel orders every
request for that (`keel.loop.prompt`: stable sections first); these pure functions measure it.

    share = prefix_share(request_text(previous), request_text(current))  # 0.0 .. 1.0

`request_text` serialises a `ModelRequest` in the order providers build their prompt from it
(tool schemas, then messages). Any other serialisation of two requests (the JSON bodies a
server recorded, say) can be measured with `prefix_share` the same way, as long as both use
the same one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache

from keel.llm.port import ModelRequest


def shared_prefix_length(previous: str, current: str) -> int:
    """How many leading characters `current` has in common with `previous`."""
    # Binary search over slice comparisons: each comparison runs in C, not per character.
    low, high = 0, min(len(previous), len(current))
    while low < high:
        middle = (low + high + 1) // 2
        if previous[:middle] == current[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def prefix_share(previous: str, current: str) -> float:
    """The share of `current` (0.0 to 1.0) that repeats the beginning of `previous`: the
    part a prefix cache filled by `previous` could serve. An empty `current` shares 0.0."""
    if not current:
        return 0.0
    return shared_prefix_length(previous, current) / len(current)


def request_text(request: ModelRequest) -> str:
    """`request` as one text: each tool schema, then each message, as a line of JSON (keys
    in the order the request holds them). Two requests that a provider would render the same
    way up to some point give texts identical up to that point."""
    tools = [
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        for tool in request.tools
    ]
    lines = [json.dumps(item, ensure_ascii=False, default=_plain) for item in tools]
    lines += [json.dumps(dict(m), ensure_ascii=False, default=_plain) for m in request.messages]
    return "\n".join(lines)


@lru_cache(maxsize=1024)
def cache_key(agent_id: str, conversation_id: str) -> str:
    """The prompt cache key of one conversation (OpenAI's `prompt_cache_key`): stable for all
    its requests, and a digest, so no conversation id (which may be a phone number) leaves.
    Kept for the most recent conversations (every request of one asks again)."""
    digest = hashlib.sha256(f"{agent_id}\x00{conversation_id}".encode()).hexdigest()
    return f"keel-{digest[:32]}"


def _plain(value: object) -> object:
    """Read-only mappings and tuples inside tool schemas, as JSON."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


__all__ = ["cache_key", "prefix_share", "request_text", "shared_prefix_length"]
