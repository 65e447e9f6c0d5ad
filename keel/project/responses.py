"""`responses.yml`: verbatim responses, their variants and buttons (spec §9.1-§9.2).

`parse_responses` reads one file (root or skill); `merge_responses` joins every file into
the one global registry; `select_variant` and `fill_placeholders` are the delivery rules.
All pure. Cross-file checks (conditions and placeholders naming declared memory, `set:`
targets writable, button source tools existing) belong to the project validator; this
module records what they need: `Response.placeholders`, `.set_payloads`, `.button_sources`
and each variant's parsed `condition`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from keel.conditions import Condition, ConditionSyntaxError, parse_condition
from keel.project.envvars import frozen_mapping
from keel.project.placeholders import (
    SET_PREFIX,
    Lookup,
    Placeholder,
    SetPayload,
    fill_placeholders,
    find_placeholders,
    parse_set_payload,
)
from keel.project.response_delivery import merge_responses, select_variant
from keel.project.response_model import Button, Buttons, ButtonSource, Response, Variant
from keel.source.diagnostics import Diagnostic
from keel.source.reporter import Reporter, key_line

VARIANT_KEYS = frozenset({"text", "condition", "metadata", "buttons"})
BUTTON_KEYS = frozenset({"title", "payload"})
NAME_PREFIX = "utter_"


def parse_responses(data: Any, file: str) -> tuple[tuple[Response, ...], list[Diagnostic]]:
    """Parse one `responses.yml` (already loaded with `load_yaml`)."""
    r = Reporter(file)
    if data is None:
        return (), r.diagnostics
    if not isinstance(data, dict) or "responses" not in data:
        message = "a responses file needs a top-level `responses:` mapping"
        r.error("response.file.malformed", key_line(data, 0), message)
        return (), r.diagnostics
    for key in data:
        if key != "responses":
            message = f"unknown top-level key `{key}` is ignored"
            r.warning("response.file.unknown_key", key_line(data, key), message, key=str(key))
    block = data["responses"]
    if block is None:
        return (), r.diagnostics
    if not isinstance(block, dict):
        message = "`responses:` must map response names to lists of variants"
        r.error("response.file.malformed", key_line(data, "responses"), message)
        return (), r.diagnostics
    parsed = (_response(r, name, value, key_line(block, name)) for name, value in block.items())
    return tuple(p for p in parsed if p is not None), r.diagnostics


def _response(r: Reporter, name: Any, value: Any, line: int | None) -> Response | None:
    if not isinstance(name, str) or not name:
        r.error("response.malformed", line, f"response name {name!r} must be text")
        return None
    if not name.startswith(NAME_PREFIX):
        message = f"response `{name}` should start with `{NAME_PREFIX}`"
        r.warning("response.name.bad_prefix", line, message, key=name)
    if not isinstance(value, list) or not value:
        message = f"response `{name}` needs a list of one or more variants"
        r.error("response.malformed", line, message, key=name)
        return None
    variants = [_variant(r, name, item, key_line(value, i)) for i, item in enumerate(value)]
    kept = tuple(v for v in variants if v is not None)
    _check_defaults(r, name, kept, line)
    return Response(name=name, file=r.file, line=line, variants=kept)


def _check_defaults(
    r: Reporter, name: str, variants: tuple[Variant, ...], line: int | None
) -> None:
    defaults = [v for v in variants if v.is_default]
    for extra in defaults[1:]:
        message = f"response `{name}` has more than one variant without a `condition`"
        r.error("response.variant.multiple_defaults", extra.line, message, key=name)
    if not defaults and variants:
        message = f"response `{name}` has conditioned variants but no default (unconditioned) one"
        r.error("response.variant.no_default", line, message, key=name)


def _variant(r: Reporter, name: str, item: Any, line: int | None) -> Variant | None:
    if isinstance(item, str):
        return _text_variant(r, name, item, line)
    if not isinstance(item, dict):
        message = f"a variant of `{name}` must be text or a mapping with `text`"
        r.error("response.variant.malformed", line, message, key=name)
        return None
    for key in item:
        if key not in VARIANT_KEYS:
            message = f"unknown variant key `{key}` in `{name}` (allowed: {_allowed(VARIANT_KEYS)})"
            r.error("response.variant.unknown_key", key_line(item, key), message, key=str(key))
    text_line = key_line(item, "text")
    base = _text_variant(r, name, item.get("text"), text_line)
    if base is None:
        return None
    source, condition = _condition(r, name, item)
    buttons, button_placeholders = _buttons(r, name, item)
    return Variant(
        text=base.text,
        condition=condition,
        condition_source=source,
        metadata=_metadata(r, name, item),
        buttons=buttons,
        line=line,
        placeholders=base.placeholders + button_placeholders,
    )


def _text_variant(r: Reporter, name: str, text: Any, line: int | None) -> Variant | None:
    if not isinstance(text, str) or not text.strip():
        message = f"a variant of `{name}` has no text (`text` must be a non-empty string)"
        r.error("response.variant.empty_text", line, message, key=name)
        return None
    # A block scalar (`text: |`) ends with a newline YAML adds; it is not part of the message.
    text = text.rstrip()
    return Variant(text=text, line=line, placeholders=_placeholders(r, name, text, line))


def _condition(r: Reporter, name: str, item: dict[Any, Any]) -> tuple[str | None, Condition | None]:
    if "condition" not in item:
        return None, None
    source = item["condition"]
    line = key_line(item, "condition")
    if not isinstance(source, str) or not source.strip():
        message = f"`condition` of a `{name}` variant must be a non-empty condition string"
        r.error("response.variant.bad_condition", line, message, key=name)
        return str(source), None
    try:
        return source, parse_condition(source)
    except ConditionSyntaxError as exc:
        message = f"invalid condition in `{name}` ({exc.code}, column {exc.column}): {exc.message}"
        r.error("response.variant.bad_condition", line, message, key=name)
        return source, None


def _metadata(r: Reporter, name: str, item: dict[Any, Any]) -> Mapping[str, object]:
    metadata = item.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        message = f"`metadata` of a `{name}` variant must be a mapping"
        r.error("response.variant.bad_metadata", key_line(item, "metadata"), message, key=name)
    return frozen_mapping(metadata)


def _buttons(
    r: Reporter, name: str, item: dict[Any, Any]
) -> tuple[Buttons, tuple[Placeholder, ...]]:
    value = item.get("buttons")
    line = key_line(item, "buttons")
    if value is None:
        return (), ()
    if isinstance(value, dict):
        return _button_source(r, name, value, line), ()
    if not isinstance(value, list):
        _malformed_buttons(r, name, line, "must be a list of {title, payload} or {source: <tool>}")
        return (), ()
    buttons: list[Button] = []
    placeholders: list[Placeholder] = []
    for index, raw in enumerate(value):
        button = _button(r, name, raw, key_line(value, index))
        if button is not None:
            buttons.append(button)
            placeholders += _placeholders(r, name, button.title, button.line)
            if button.payload != button.title:
                placeholders += _placeholders(r, name, button.payload, button.line)
    return tuple(buttons), tuple(placeholders)


def _button_source(r: Reporter, name: str, value: dict[Any, Any], line: int | None) -> Buttons:
    tool = value.get("source")
    if set(value) != {"source"} or not isinstance(tool, str) or not tool:
        _malformed_buttons(r, name, line, "as a mapping must be exactly `{source: <tool name>}`")
        return ()
    return ButtonSource(tool=tool, line=line)


def _button(r: Reporter, name: str, raw: Any, line: int | None) -> Button | None:
    if not isinstance(raw, dict) or set(raw) - BUTTON_KEYS:
        _malformed_buttons(r, name, line, "each button is a mapping with `title` and `payload?`")
        return None
    title = raw.get("title")
    payload = raw.get("payload", title)
    if not isinstance(title, str) or not title.strip():
        hint = (
            " (quote it: YAML reads yes/no/on/off as booleans)" if isinstance(title, bool) else ""
        )
        _malformed_buttons(r, name, line, f"each button needs a non-empty text `title`{hint}")
        return None
    if isinstance(payload, int | float) and not isinstance(payload, bool):
        payload = str(payload)
    if not isinstance(payload, str) or not payload.strip():
        _malformed_buttons(r, name, line, "a button `payload` must be non-empty text")
        return None
    return Button(
        title=title, payload=payload, line=line, set_payload=_set_payload(r, name, payload, line)
    )


def _set_payload(r: Reporter, name: str, payload: str, line: int | None) -> SetPayload | None:
    if not payload.startswith(SET_PREFIX):
        return None
    parsed = parse_set_payload(payload, line)
    if parsed is None:
        message = (
            f"button payload {payload!r} in `{name}` is not "
            "`set:session.<namespace>.<entry>=<value>`"
        )
        r.error("response.buttons.bad_set_payload", line, message, key=name)
    return parsed


def _malformed_buttons(r: Reporter, name: str, line: int | None, detail: str) -> None:
    r.error("response.buttons.malformed", line, f"buttons of `{name}`: {detail}", key=name)


def _placeholders(r: Reporter, name: str, text: str, line: int | None) -> tuple[Placeholder, ...]:
    found, malformed = find_placeholders(text, line)
    for raw in malformed:
        message = (
            f"{raw} in `{name}` is not a placeholder; "
            "write {session.<namespace>.<entry>} or {entry}"
        )
        r.warning("response.placeholder.malformed", line, message, key=name)
    return tuple(found)


def _allowed(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


__all__ = [
    "Button",
    "ButtonSource",
    "Buttons",
    "Lookup",
    "Placeholder",
    "Response",
    "SetPayload",
    "Variant",
    "fill_placeholders",
    "merge_responses",
    "parse_responses",
    "select_variant",
]
