"""memory.yml files -> declared fields plus diagnostics (spec §3.1, §1.5).

Pure: callers read the file and parse it with `keel.source.yaml.load_yaml`; these
functions only interpret the parsed data. Two shapes exist:

* root `memory.yml`: a flat map `entry -> attributes`, namespace `project`;
* `skills/<id>/memory.yml`: top key `schema:` with optional `public:` / `private:` maps
  of `entry -> attributes`, namespace = the skill id. Other top-level keys are ignored,
  except the legacy `memory:` top key (reported) and the legacy `access:` block (warned).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from keel.memory.attributes import LEGACY_ACCESS_KEY, check_access_block, parse_field
from keel.memory.schema import (
    PROJECT_NAMESPACE,
    RESERVED_NAMESPACES,
    MemoryField,
    Visibility,
)
from keel.source.diagnostics import Diagnostic, diag
from keel.source.yaml import line_of, own_line

SKILL_SECTIONS: Final[tuple[Visibility, ...]] = ("public", "private")
SKILL_FILE_KEYS: Final = frozenset({"schema", "memory", LEGACY_ACCESS_KEY})
"""Top-level keys of a skill memory.yml (`memory:` and `access:` are legacy); others warn."""
_WRAPPER_KEYS: Final = frozenset({"schema", "memory", "public", "private"})

Parsed = tuple[tuple[MemoryField, ...], list[Diagnostic]]


def _not_a_mapping(data: object, file: str, line: int | None, what: str) -> Diagnostic:
    found = type(data).__name__
    return diag("memory.not_a_mapping", file, line, f"{what} must be a mapping, got {found}")


def _parse_entries(
    entries: Mapping[Any, Any],
    *,
    namespace: str,
    visibility: Visibility,
    file: str,
    seen: dict[str, int | None],
    skip: frozenset[object] = frozenset(),
) -> Parsed:
    """Parse `entry -> attributes` pairs; `seen` spans sections to catch duplicates."""
    fields: list[MemoryField] = []
    diagnostics: list[Diagnostic] = []
    for name, attrs in entries.items():
        if name in skip:
            continue
        line = line_of(entries, name)
        field, found = parse_field(
            namespace=namespace,
            name=name,
            attrs=attrs,
            visibility=visibility,
            file=file,
            line=line,
        )
        diagnostics.extend(found)
        if field is None:
            continue
        if field.name in seen:
            message = f"`{field.key}` is declared twice (first on line {seen[field.name]})"
            diagnostics.append(diag("memory.duplicate_entry", file, line, message, key=field.key))
            continue
        seen[field.name] = line
        fields.append(field)
    return tuple(fields), diagnostics


def _project_special(
    entries: Mapping[Any, Any], file: str
) -> tuple[frozenset[object], list[Diagnostic]]:
    """Top-level keys of root memory.yml that are not fields but known mistakes."""
    skip: set[object] = set()
    diagnostics: list[Diagnostic] = []
    for name, attrs in entries.items():
        if not isinstance(attrs, Mapping) or "type" in attrs:
            continue
        if name == LEGACY_ACCESS_KEY:
            check_access_block(entries, name, file, diagnostics)
            skip.add(name)
        elif name in _WRAPPER_KEYS:
            message = (
                f"root memory.yml is a flat map `entry -> attributes`; `{name}:` is the "
                "skill memory.yml wrapper and does not belong here"
            )
            diagnostics.append(
                diag("memory.project_wrapper", file, line_of(entries, name), message, key=name)
            )
            skip.add(name)
    return frozenset(skip), diagnostics


def parse_project_memory(data: object, file: str) -> Parsed:
    """Root memory.yml (already parsed) -> project fields and diagnostics."""
    if data is None:
        return (), []
    if not isinstance(data, Mapping):
        return (), [_not_a_mapping(data, file, own_line(data, 1), "root memory.yml")]
    skip, diagnostics = _project_special(data, file)
    fields, found = _parse_entries(
        data, namespace=PROJECT_NAMESPACE, visibility="project", file=file, seen={}, skip=skip
    )
    return fields, diagnostics + found


def _legacy_memory_key(data: Mapping[Any, Any], file: str) -> list[Diagnostic]:
    if "memory" not in data:
        return []
    has_schema = "schema" in data
    message = "skill memory.yml uses `schema:` (with public:/private:), not the legacy `memory:`"
    if has_schema:
        message += "; the `memory:` block is ignored"
    return [
        diag(
            "memory.legacy_memory_key",
            file,
            line_of(data, "memory"),
            message,
            key="memory",
            severity="warning" if has_schema else "error",
        )
    ]


def _parse_schema_block(skill_id: str, schema: Mapping[Any, Any], file: str) -> Parsed:
    fields: list[MemoryField] = []
    diagnostics: list[Diagnostic] = []
    seen: dict[str, int | None] = {}
    for section, entries in schema.items():
        line = line_of(schema, section)
        if section not in SKILL_SECTIONS:
            message = (
                f"unknown section `{section}` under `schema:`; entries go under "
                "`public:` or `private:`"
            )
            diagnostics.append(diag("memory.unknown_section", file, line, message, key=section))
            continue
        if entries is None:
            continue
        if not isinstance(entries, Mapping):
            diagnostics.append(_not_a_mapping(entries, file, line, f"`schema.{section}`"))
            continue
        parsed, found = _parse_entries(
            entries, namespace=skill_id, visibility=section, file=file, seen=seen
        )
        fields.extend(parsed)
        diagnostics.extend(found)
    return tuple(fields), diagnostics


def parse_skill_memory(skill_id: str, data: object, file: str) -> Parsed:
    """skills/<skill_id>/memory.yml (already parsed) -> the skill's fields and diagnostics."""
    if skill_id in RESERVED_NAMESPACES:
        message = f"a skill cannot be called `{skill_id}`: it is a reserved memory namespace"
        return (), [diag("memory.reserved_namespace", file, None, message, key=skill_id)]
    if data is None:
        return (), []
    if not isinstance(data, Mapping):
        return (), [_not_a_mapping(data, file, own_line(data, 1), "skill memory.yml")]
    diagnostics = _legacy_memory_key(data, file)
    for key in data:
        if key not in SKILL_FILE_KEYS:
            message = f"unknown top-level key `{key}` is ignored (entries go under `schema:`)"
            diagnostics.append(
                diag(
                    "memory.unknown_key",
                    file,
                    line_of(data, key),
                    message,
                    key=str(key),
                    severity="warning",
                )
            )
    if LEGACY_ACCESS_KEY in data:
        check_access_block(data, LEGACY_ACCESS_KEY, file, diagnostics)
    schema = data.get("schema")
    if schema is None:
        return (), diagnostics
    if not isinstance(schema, Mapping):
        line = line_of(data, "schema")
        return (), [*diagnostics, _not_a_mapping(schema, file, line, "`schema`")]
    fields, found = _parse_schema_block(skill_id, schema, file)
    return fields, diagnostics + found
