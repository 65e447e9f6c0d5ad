"""Memory: declared fields, scopes, who may read and write, coercion, post-write hooks.

    fields, diagnostics = parse_project_memory(data, "memory.yml")
    schema = MemorySchema.of(fields, skill_fields)
    decision = check_write(schema, "city", "llm", "weather", False, frozenset({"city"}))
    result = coerce(decision.field, "Berlin") if decision.allowed else None

Pure (spec §3): no IO, no clock. Values live in the event log; this package only says
what is declared, what a value must look like, and who may touch it.
"""

from keel.memory.access import (
    ENGINE_READER,
    WRITE_CODES,
    WriteDecision,
    Writer,
    can_read,
    check_write,
    is_collect_owned,
    reader_for,
)
from keel.memory.coerce import CoerceResult, coerce, coerce_value
from keel.memory.hooks import HOOK_PREFIX, check_hooks, entry_of_hook, hook_name
from keel.memory.load import parse_project_memory, parse_skill_memory
from keel.memory.payload import (
    MalformedPayload,
    SetPayload,
    format_set_payload,
    parse_set_payload,
)
from keel.memory.schema import (
    FIELD_TYPES,
    PROJECT_NAMESPACE,
    RESERVED_NAMESPACES,
    SYSTEM_FIELDS,
    SYSTEM_KEYS,
    SYSTEM_NAMESPACE,
    FieldType,
    MemoryField,
    MemorySchema,
    Visibility,
    is_entry_name,
    qualify,
)
from keel.memory.values import PII_MARKER, UNSET_MARKER, initial_values, render_for_prompt

__all__ = [
    "ENGINE_READER",
    "FIELD_TYPES",
    "HOOK_PREFIX",
    "PII_MARKER",
    "PROJECT_NAMESPACE",
    "RESERVED_NAMESPACES",
    "SYSTEM_FIELDS",
    "SYSTEM_KEYS",
    "SYSTEM_NAMESPACE",
    "UNSET_MARKER",
    "WRITE_CODES",
    "CoerceResult",
    "FieldType",
    "MalformedPayload",
    "MemoryField",
    "MemorySchema",
    "SetPayload",
    "Visibility",
    "WriteDecision",
    "Writer",
    "can_read",
    "check_hooks",
    "check_write",
    "coerce",
    "coerce_value",
    "entry_of_hook",
    "format_set_payload",
    "hook_name",
    "initial_values",
    "is_collect_owned",
    "is_entry_name",
    "parse_project_memory",
    "parse_set_payload",
    "parse_skill_memory",
    "qualify",
    "reader_for",
    "render_for_prompt",
]
