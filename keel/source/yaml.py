"""YAML that remembers where things are.

`load_yaml` parses with PyYAML's safe loader but builds `LineDict` / `LineList`
containers that record the 1-based line of every mapping key and list item, so loaders
can point a diagnostic at the exact line. A syntax error becomes a `yaml.syntax`
diagnostic, never an exception. `freeze` and `type_name` serve the parsers of parsed values.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import yaml

from keel.source.diagnostics import Diagnostic, diag


class LineDict(dict[Any, Any]):
    """A dict that knows its own line and the line of each key."""

    line: int = 0
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        """Line of `key` (or of the mapping itself when the key is absent)."""
        return self.key_lines.get(key, self.line)


class LineList(list[Any]):
    """A list that knows its own line and the line of each item."""

    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        """Line of item `index` (or of the list itself when out of range)."""
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index]
        return self.line


class _LineLoader(yaml.SafeLoader):
    """Safe loader whose mappings and sequences carry line numbers."""

    line_offset: int = 0

    def construct_line_mapping(self, node: yaml.MappingNode) -> LineDict:
        self.flatten_mapping(node)
        result = LineDict()
        result.line = node.start_mark.line + 1 + self.line_offset
        result.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, "mapping keys must be scalars", key_node.start_mark
                )
            result[key] = self.construct_object(value_node, deep=True)
            result.key_lines[key] = key_node.start_mark.line + 1 + self.line_offset
        return result

    def construct_line_sequence(self, node: yaml.SequenceNode) -> LineList:
        result = LineList()
        result.line = node.start_mark.line + 1 + self.line_offset
        result.item_lines = []
        for child in node.value:
            result.append(self.construct_object(child, deep=True))
            result.item_lines.append(child.start_mark.line + 1 + self.line_offset)
        return result


_LineLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_line_mapping
)
_LineLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _LineLoader.construct_line_sequence
)


def load_yaml(text: str, file: str, *, line_offset: int = 0) -> tuple[Any, list[Diagnostic]]:
    """Parse `text`; returns (data, diagnostics). Data is None when parsing failed.

    `line_offset` is added to every line, for YAML embedded in another file
    (skill frontmatter, ordered-block bodies).
    """
    if "\t" in text:
        for number, raw in enumerate(text.splitlines(), start=1):
            stripped = raw.lstrip(" ")
            if stripped.startswith("\t"):
                return None, [
                    diag(
                        "yaml.tab_indent",
                        file,
                        number + line_offset,
                        "indentation uses a tab; YAML needs spaces",
                    )
                ]
    try:
        loader = _LineLoader(text)
    except yaml.YAMLError as exc:  # a reader error: characters YAML cannot hold
        return None, [diag("yaml.syntax", file, 1 + line_offset, f"YAML error: {exc}")]
    loader.line_offset = line_offset
    try:
        return loader.get_single_data(), []
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark is not None else None
        reason = exc.problem or exc.context or "invalid YAML"
        return None, [diag("yaml.syntax", file, line, f"YAML syntax error: {reason}")]
    except yaml.YAMLError as exc:
        return None, [diag("yaml.syntax", file, 1 + line_offset, f"YAML error: {exc}")]
    except (ValueError, KeyError, AttributeError, TypeError, RecursionError) as exc:
        # PyYAML's constructors raise plain exceptions for values such as `2001-13-45`,
        # `!!bool maybe` or very deep nesting; the exact line is not known.
        reason = f"{type(exc).__name__}: {exc}"
        return None, [diag("yaml.syntax", file, 1 + line_offset, f"YAML value error: {reason}")]
    finally:
        loader.dispose()


def line_of(container: object, key: Any, default: int | None = None) -> int | None:
    """Line of `key` inside a LineDict/LineList, or `default` for plain containers."""
    if isinstance(container, LineDict):
        return container.line_of(key)
    if isinstance(container, LineList) and isinstance(key, int):
        return container.line_of(key)
    return default


def own_line(container: object, default: int | None = None) -> int | None:
    """The line where a LineDict/LineList starts, or `default`."""
    if isinstance(container, LineDict | LineList):
        return container.line
    return default


# PyYAML's constructors raise plain Python errors for some bad scalars (`2001-13-45`,
# `!!int x`, `!!bool maybe`), its reader rejects control characters, and it recurses once
# per nesting level; a skill file must never make the parser raise.
_YAML_CRASHES = (
    yaml.YAMLError,
    ValueError,
    KeyError,
    AttributeError,
    TypeError,
    RecursionError,
)


def load_yaml_safely(text: str, file: str, line_offset: int) -> tuple[Any, list[Diagnostic]]:
    """`load_yaml`, with any error that still escapes turned into a `yaml.syntax` diagnostic."""
    try:
        return load_yaml(text, file, line_offset=line_offset)
    except _YAML_CRASHES as exc:
        reason = "nesting too deep" if isinstance(exc, RecursionError) else str(exc)
        return None, [
            diag("yaml.syntax", file, line_offset + 1, f"YAML could not be read: {reason}")
        ]


def freeze(value: object) -> object:
    """A deep immutable copy of a YAML value: mappings -> MappingProxyType, lists -> tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    return value


def type_name(value: object) -> str:
    """A YAML-ish name for the type of `value`, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return type(value).__name__
