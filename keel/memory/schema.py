"""Declared memory: fields, their namespaces, and the project-wide schema.

Every memory entry Keel reads or writes is declared (spec §3.1):

* project fields in the root `memory.yml`, namespace `project`, visibility `project`;
* skill fields in `skills/<id>/memory.yml`, namespace = the skill id, visibility
  `public` (readable by every skill) or `private` (this skill only);
* system fields (`system.<x>`), owned by the engine, never declared by an author.

Storage keys are scope-qualified: `project.<entry>`, `<skill_id>.<entry>`, `system.<x>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from types import MappingProxyType
from typing import Final, Literal, get_args

from keel.memory.extract_spec import ExtractSpec

FieldType = Literal["text", "bool", "int", "float", "list", "json", "categorical", "any"]
"""The declarable value types (spec §3.2)."""

FIELD_TYPES: Final[frozenset[str]] = frozenset(get_args(FieldType))

Visibility = Literal["project", "public", "private"]
"""`project` for root memory.yml fields; `public` / `private` for skill fields."""

PROJECT_NAMESPACE: Final = "project"
SYSTEM_NAMESPACE: Final = "system"
RESERVED_NAMESPACES: Final[frozenset[str]] = frozenset({PROJECT_NAMESPACE, SYSTEM_NAMESPACE})
"""Names no skill may use as its id, because they are memory namespaces already."""

_ENTRY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_entry_name(name: object) -> bool:
    """True when `name` can name a memory entry: an ASCII identifier."""
    return isinstance(name, str) and _ENTRY_NAME.match(name) is not None


def qualify(namespace: str, name: str) -> str:
    """The storage key of `name` in `namespace`: `namespace.name`."""
    return f"{namespace}.{name}"


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryField:
    """One declared memory entry with its attributes."""

    namespace: str
    """`project`, a skill id, or `system` (engine-owned fields only)."""
    name: str
    """The entry name, an identifier."""
    type: FieldType
    visibility: Visibility
    description: str | None = None
    """Shown to the LLM when it decides whether to record a value."""
    enum_values: tuple[str, ...] = ()
    """Allowed values of a `categorical` field, in declared spelling."""
    initial_value: object = dc_field(default=None, hash=False)
    """Value at skill (re)activation / session start; already coerced, frozen
    (lists as tuples, mappings as read-only mappings). `values.initial_values` thaws it."""
    llm_settable: bool = False
    """Skill fields only: the LLM may write it with `set_fields`."""
    pii: bool = False
    """Rendered as `[set]` in prompts."""
    mutable: bool = False
    """Project fields only: allow overwrites after the first write."""
    seed: bool = False
    """Project fields only: filled from session-start channel metadata."""
    anonymization: Mapping[str, object] | None = dc_field(default=None, hash=False)
    """Kept as written (shape unknown, spec §3.2); not interpreted."""
    extract: ExtractSpec | None = dc_field(default=None, hash=False)
    """Keel: the typed extractor that may fill it without a model (run by `keel.extract`)."""
    file: str = ""
    """Declaring file relative to the project root; empty for system fields."""
    line: int | None = None
    """1-based line of the entry name in `file`."""

    @property
    def key(self) -> str:
        """The scope-qualified storage key, `namespace.name`."""
        return qualify(self.namespace, self.name)

    @property
    def is_project(self) -> bool:
        """True for a root memory.yml field."""
        return self.namespace == PROJECT_NAMESPACE

    @property
    def is_system(self) -> bool:
        """True for an engine-owned field."""
        return self.namespace == SYSTEM_NAMESPACE


def _system_field(name: str) -> MemoryField:
    # "private" because only the engine reads system memory (access.can_read).
    return MemoryField(namespace=SYSTEM_NAMESPACE, name=name, type="json", visibility="private")


SYSTEM_FIELDS: Final[tuple[MemoryField, ...]] = (
    _system_field("pending_tool_confirmation"),
    _system_field("__discovered__"),
    _system_field("session_started_metadata"),
)
"""Engine-owned memory; known to every schema, declarable by nobody."""

SYSTEM_KEYS: Final[frozenset[str]] = frozenset(f.key for f in SYSTEM_FIELDS)


@dataclass(frozen=True, kw_only=True, slots=True)
class MemorySchema:
    """All memory fields of one project, looked up by qualified key.

    `fields` holds the declared fields (project and skills) in declaration order; the
    system fields are added to every lookup. Loaders guarantee unique keys; a duplicate
    or a declared `system` field here is a programming error (ValueError).
    """

    fields: tuple[MemoryField, ...] = ()
    _by_key: Mapping[str, MemoryField] = dc_field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        by_key = {f.key: f for f in SYSTEM_FIELDS}
        for declared in self.fields:
            if declared.is_system:
                raise ValueError(f"system memory cannot be declared: {declared.key}")
            if declared.key in by_key:
                raise ValueError(f"memory field declared twice: {declared.key}")
            by_key[declared.key] = declared
        object.__setattr__(self, "_by_key", MappingProxyType(by_key))

    @classmethod
    def of(cls, *groups: Iterable[MemoryField]) -> MemorySchema:
        """A schema from any number of field groups (project fields, each skill's fields)."""
        return cls(fields=tuple(f for group in groups for f in group))

    def field(self, key: str) -> MemoryField | None:
        """The field with qualified `key` (declared or system), or None."""
        return self._by_key.get(key)

    def resolve(self, name: str, active_skill: str | None) -> MemoryField | None:
        """The field `name` means when written from `active_skill`'s context.

        A bare entry name resolves in the active skill's namespace first, then in
        `project`; a qualified name (`project.x`, `<skill>.x`, `system.x`) is looked up
        as is. Whether the caller may read or write it is `keel.memory.access`'s call.
        """
        if "." in name:
            return self._by_key.get(name)
        if active_skill is not None:
            own = self._by_key.get(qualify(active_skill, name))
            if own is not None:
                return own
        return self._by_key.get(qualify(PROJECT_NAMESPACE, name))

    def fields_of(self, namespace: str) -> tuple[MemoryField, ...]:
        """Fields of one namespace in declaration order (system fields for `system`)."""
        if namespace == SYSTEM_NAMESPACE:
            return SYSTEM_FIELDS
        return tuple(f for f in self.fields if f.namespace == namespace)

    @property
    def namespaces(self) -> frozenset[str]:
        """Namespaces that declare at least one field (never `system`)."""
        return frozenset(f.namespace for f in self.fields)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._by_key
