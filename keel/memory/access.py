"""Who may read and who may write which memory (spec §3.3, §3.5, §4.2).

Reading, from a skill: its own public and private entries, every other skill's public
entries, and all project entries. System memory is read by the engine only (reader
`ENGINE_READER`). A reader of None is "no skill" (e.g. routing): project and public only.

Writing (`check_write`), by writer:

| writer          | may write                                                   |
|-----------------|-------------------------------------------------------------|
| `llm`           | active-skill entries that are llm_settable or collect-owned |
| `button`        | any declared entry of the active skill or the project       |
| `tool`, `hook`  | any declared entry of the active skill or the project       |
| `block`         | (`set_memory:`) the same as tools                           |
| `session_start` | project entries marked `seed: true`                         |
| `engine`        | anything, system memory included                            |

The LLM never writes project memory. On top of that a project entry is write-once per
session unless `mutable`, for every writer but the engine. Legacy `access: deny_write`
lists are not enforced (spec §12 default: parse, warn, do not enforce).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from keel.conditions import MemoryReader, Reference, Unreadable
from keel.memory.schema import PROJECT_NAMESPACE, SYSTEM_NAMESPACE, MemoryField, MemorySchema

Writer = Literal["tool", "llm", "block", "button", "session_start", "hook", "engine"]
"""Where a memory write comes from."""

ENGINE_READER: Final = SYSTEM_NAMESPACE
"""Pass as `reader_skill` when the engine itself reads (it may read everything).
No skill can be called `system`, so it never collides with a skill id."""

UNDECLARED: Final = "memory.write.undeclared"
NOT_LLM_SETTABLE: Final = "memory.write.not_llm_settable"
PROJECT_BY_LLM: Final = "memory.write.project_by_llm"
WRITE_ONCE: Final = "memory.write.write_once"
FOREIGN_NAMESPACE: Final = "memory.write.foreign_namespace"
SYSTEM: Final = "memory.write.system"
NOT_SEED: Final = "memory.write.not_seed"

WRITE_CODES: Final = frozenset(
    {UNDECLARED, NOT_LLM_SETTABLE, PROJECT_BY_LLM, WRITE_ONCE, FOREIGN_NAMESPACE, SYSTEM, NOT_SEED}
)
"""Every code a refused `WriteDecision` can carry."""


def _namespace_of(key: str) -> str:
    return key.partition(".")[0] if "." in key else ""


def can_read(field_or_key: MemoryField | str, reader_skill: str | None) -> bool:
    """True when `reader_skill` may read the field (spec §4.2).

    With a bare key string the visibility of another skill's entry is unknown, so it
    is refused (fail closed); pass the `MemoryField` to read other skills' public entries.
    """
    if isinstance(field_or_key, str):
        namespace = _namespace_of(field_or_key)
        visibility = None
    else:
        namespace = field_or_key.namespace
        visibility = field_or_key.visibility
    if reader_skill == ENGINE_READER:
        return True
    if namespace == SYSTEM_NAMESPACE:
        return False
    if namespace == PROJECT_NAMESPACE or (reader_skill is not None and namespace == reader_skill):
        return True
    return visibility == "public"


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteDecision:
    """Whether one write may happen, and which field it lands in."""

    allowed: bool
    field: MemoryField | None = None
    """The resolved field (None when the key names nothing declared)."""
    code: str | None = None
    """One of `WRITE_CODES` when refused."""
    reason: str = ""
    """Why it was refused, for a person (or the LLM)."""

    @property
    def key(self) -> str | None:
        """The qualified key written, when the field is known."""
        return self.field.key if self.field is not None else None


def _refuse(code: str, reason: str, field: MemoryField | None = None) -> WriteDecision:
    return WriteDecision(allowed=False, field=field, code=code, reason=reason)


def is_collect_owned(field: MemoryField, collect_owned: frozenset[str]) -> bool:
    """True when a `collect:` step owns the field (`collect_owned` holds entry names of
    the active skill, or qualified keys). Never for project fields: a collect step cannot
    write project memory (spec §2.6)."""
    if field.is_project or field.is_system:
        return False
    return field.key in collect_owned or field.name in collect_owned


def _scope_rule(
    field: MemoryField, writer: Writer, active_skill: str | None, collect_owned: frozenset[str]
) -> WriteDecision | None:
    """The writer-specific rule; None when the write passes it."""
    own = field.namespace == active_skill
    if writer == "session_start":
        if not (field.is_project and field.seed):
            return _refuse(
                NOT_SEED, f"session start writes only seed project fields, not {field.key}", field
            )
        return None
    if writer == "llm":
        if field.is_project:
            return _refuse(
                PROJECT_BY_LLM, f"the LLM may not write project memory ({field.key})", field
            )
        if not own:
            return _refuse(FOREIGN_NAMESPACE, f"{field.key} belongs to another skill", field)
        if not (field.llm_settable or is_collect_owned(field, collect_owned)):
            return _refuse(
                NOT_LLM_SETTABLE, f"{field.key} is not llm_settable nor collected", field
            )
        return None
    if not (own or field.is_project):
        return _refuse(FOREIGN_NAMESPACE, f"{field.key} belongs to another skill", field)
    return None


def check_write(
    schema: MemorySchema,
    key: str,
    writer: Writer,
    active_skill: str | None,
    current_value_is_set: bool,
    collect_owned: frozenset[str] = frozenset(),
) -> WriteDecision:
    """May `writer` write `key` now? `key` is bare (resolved like `MemorySchema.resolve`)
    or qualified; `current_value_is_set` drives the project write-once rule."""
    field = schema.resolve(key, active_skill)
    if field is None:
        return _refuse(UNDECLARED, f"memory key {key!r} is not declared")
    if writer == "engine":
        return WriteDecision(allowed=True, field=field)
    if field.is_system:
        return _refuse(SYSTEM, f"{field.key} is engine-owned system memory", field)
    refused = _scope_rule(field, writer, active_skill, collect_owned)
    if refused is not None:
        return refused
    if field.is_project and not field.mutable and current_value_is_set:
        return _refuse(WRITE_ONCE, f"{field.key} is already set and is write-once", field)
    return WriteDecision(allowed=True, field=field)


def reader_for(
    values: Mapping[str, object], schema: MemorySchema, reader_skill: str | None
) -> MemoryReader:
    """A memory reader for condition evaluation from `reader_skill`'s point of view.

    `values` maps qualified keys to current values. The reader returns None for a
    declared but unset entry and raises `Unreadable` for an undeclared entry or one the
    reader may not read (the evaluator then fails closed).
    """

    def read(reference: Reference) -> object:
        field = schema.field(f"{reference.namespace}.{reference.entry}")
        if field is None:
            raise Unreadable(reference, "not a declared memory entry")
        if not can_read(field, reader_skill):
            raise Unreadable(reference, "not readable from here")
        return values.get(field.key)

    return read
