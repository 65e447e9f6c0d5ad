"""Post-write hooks: `run_after_setting_<entry>` (spec §3.4, §1.5).

A function with that name in a skill's tools file is a hook for the skill's entry
`<entry>`: never offered to the LLM, called by the engine with no arguments after a
successful write of that entry by the LLM (`set_fields`), a collect, or a `set:` tap.
Returning a payload with a non-null `error` rolls the write back. Train accepts a hook
only when its field is `llm_settable` or owned by a `collect:` step.

Legacy: Maestro-era skills used `set_<entry>` functions raising `InvalidMemoryValue`.
Keel does not treat `set_<entry>` as a hook (it is an ordinary tool name); authors
migrating should rename it `run_after_setting_<entry>` and return `{"error": ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from keel.memory.access import is_collect_owned
from keel.memory.schema import PROJECT_NAMESPACE, MemorySchema, is_entry_name, qualify
from keel.source.diagnostics import Diagnostic, diag

HOOK_PREFIX: Final = "run_after_setting_"


def hook_name(entry: str) -> str:
    """The hook function name for `entry`: `run_after_setting_<entry>`."""
    return f"{HOOK_PREFIX}{entry}"


def entry_of_hook(function_name: str) -> str | None:
    """The entry a hook function is for, or None when the name is not a hook name."""
    if not function_name.startswith(HOOK_PREFIX):
        return None
    entry = function_name[len(HOOK_PREFIX) :]
    return entry if is_entry_name(entry) else None


def check_hooks(
    schema: MemorySchema,
    skill_id: str,
    hook_entries: Mapping[str, int | None],
    collect_owned: frozenset[str],
    *,
    file: str,
) -> list[Diagnostic]:
    """Check a skill's hooks; `hook_entries` maps each hooked entry to its `def` line.

    `memory.hook.unknown_field`: the skill declares no such entry (project fields are
    never LLM- or collect-writable, so a hook on one is `field_not_writable`).
    `memory.hook.field_not_writable`: the entry is neither `llm_settable` nor collect-owned.
    """
    diagnostics: list[Diagnostic] = []
    for entry, line in hook_entries.items():
        name = hook_name(entry)
        field = schema.field(qualify(skill_id, entry))
        if field is None:
            if schema.field(qualify(PROJECT_NAMESPACE, entry)) is not None:
                message = (
                    f"hook `{name}` is for project field `project.{entry}`, which only "
                    "tools, buttons and blocks write; hooks run after LLM or collect writes"
                )
                code = "memory.hook.field_not_writable"
            else:
                message = f"hook `{name}`: skill `{skill_id}` declares no memory entry `{entry}`"
                code = "memory.hook.unknown_field"
            diagnostics.append(diag(code, file, line, message, key=name))
        elif not (field.llm_settable or is_collect_owned(field, collect_owned)):
            message = (
                f"hook `{name}`: `{field.key}` is neither llm_settable nor owned by a "
                "collect step, so the hook would never run"
            )
            diagnostics.append(
                diag("memory.hook.field_not_writable", file, line, message, key=name)
            )
    return diagnostics
