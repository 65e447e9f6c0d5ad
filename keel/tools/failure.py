"""What counts as a failed tool run: the one definition every path uses (pure).

A run failed when the tool raised, ran past its timeout, returned a `ToolResult` with
`error` set, or returned a **failure payload**: a mapping (returned bare, or as the
`ToolResult.llm_response`) that says so itself, the way Mantle tools report failure:

| the mapping has | failed? |
| --- | --- |
| `ok: true` or `success: true` | no, whatever else it holds (an explicit success wins) |
| `ok: false` | yes |
| `success: false` | yes |
| an `error` that is not null, `false` or empty | yes |
| none of these | no: it is data for the model |

Only the booleans count (`ok: 0` or `ok: "false"` is data). `keel.tools.dispatch` applies
this to every run (model tool calls, `execute_tool` steps, confirmed calls, plan steps,
MCP results) and to post-write hooks, so a payload reads the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from dataclasses import dataclass

from keel.tools.result import to_result_text


@dataclass(frozen=True, kw_only=True, slots=True)
class PayloadFailure:
    """A payload that reports failure, and its own words for it."""

    marker: str
    """What marked it: `ok: false`, `success: false` or `error`."""
    message: str | None
    """The payload's words: its `error` (as text), else its `message` or `reason`; None
    when it has none."""


def payload_failure(value: object) -> PayloadFailure | None:
    """The failure `value` reports, or None when it is not a failure payload."""
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict: no ABC check
        return None
    ok, success, error = value.get("ok"), value.get("success"), value.get("error")
    if ok is True or success is True:
        return None
    if ok is False:
        marker = "ok: false"
    elif success is False:
        marker = "success: false"
    elif _says_something(error):
        marker = "error"
    else:
        return None
    return PayloadFailure(marker=marker, message=_words(value))


def _says_something(value: object) -> bool:
    if value is None or value is False:
        return False
    return not (isinstance(value, str | Sized) and len(value) == 0)


def _words(payload: Mapping[object, object]) -> str | None:
    error = payload.get("error")
    if _says_something(error):
        return to_result_text(error) or None
    for key in ("message", "reason"):
        text = payload.get(key)
        if isinstance(text, str) and text.strip():
            return text
    return None
