"""`JsonReply`: a JSON answer encoded with orjson (the event codec's encoder).

The same bytes as Starlette's `JSONResponse` for what the API answers (compact, UTF-8,
string keys), a few times faster to encode. A value orjson cannot encode (an integer
beyond 64 bits) falls back to the standard library's encoder, as `keel.events.codec`
does; orjson writes a non-finite float as `null` where the standard encoder refuses it.
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse


class JsonReply(JSONResponse):
    """`JSONResponse`, rendered by orjson."""

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            return super().render(content)
