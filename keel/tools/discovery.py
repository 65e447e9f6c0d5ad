"""Find every builder tool of an agent project and resolve name precedence once.

Sources (spec §5.2): skill-local `skills/<id>/tools.py` and `skills/<id>/tools/*.py`
(auto-discovered; on a name clash the `tools/*.py` one wins, with a warning), and shared
root `tools/*.py` (visible to a skill only when its `import_tools` lists the name). A
skill-local tool wins over a shared one of the same name. Files whose name starts with `_`
are skipped. `mcp/<server>:<tool>` entries of `import_tools` belong to the MCP source and
are ignored here. Reserved framework names cannot be used by builder tools.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from keel.source.diagnostics import Diagnostic, diag
from keel.tools.definition import HookDefinition, ToolDefinition
from keel.tools.load import ToolModule, load_tool_file

RESERVED_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "activate",
        "set_fields",
        "complete_skill",
        "cancel_skill",
        "listen",
        "search_knowledge",
        "cannot_help",
        "resolve_tool_confirmation",
        "hangup",
        "action_listen",
    }
)
"""Framework tool names (spec §6); a builder tool may not use them."""

MCP_IMPORT_PREFIX = "mcp/"
MODULE_PACKAGE = "keel_project_tools"
"""Tool modules are registered as `keel_project_tools.<project hash>.<...>`."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolCatalog:
    """All builder tools and hooks of a project, with precedence resolved."""

    local: Mapping[str, Mapping[str, ToolDefinition]]
    """skill id -> tool name -> definition (after the tools/*.py-over-tools.py rule)."""
    shared: Mapping[str, ToolDefinition]
    """Root `tools/*.py`: tool name -> definition."""
    hooks: Mapping[str, Mapping[str, HookDefinition]]
    """skill id -> memory entry -> post-write hook."""
    modules: tuple[ToolModule, ...]
    """Every loaded file (for memory-write checks of helpers no tool reaches)."""
    diagnostics: tuple[Diagnostic, ...]

    def tools_for_skill(
        self, skill_id: str, import_tools: Iterable[str]
    ) -> Mapping[str, ToolDefinition]:
        """The builder tools skill `skill_id` may use: its own, then imported shared ones
        it does not shadow. Unknown imports are skipped (see `missing_imports`)."""
        visible = dict(self.local.get(skill_id, {}))
        for name in import_tools:
            shared = self.shared.get(name)
            if shared is not None and name not in visible:
                visible[name] = shared
        return MappingProxyType(visible)

    def missing_imports(self, import_tools: Iterable[str]) -> tuple[str, ...]:
        """The `import_tools` names (not `mcp/...`) that no root tools file defines."""
        return tuple(
            name
            for name in import_tools
            if not name.startswith(MCP_IMPORT_PREFIX) and name not in self.shared
        )

    def hooks_for_skill(self, skill_id: str) -> Mapping[str, HookDefinition]:
        """memory entry -> post-write hook, for skill `skill_id`."""
        return self.hooks.get(skill_id, MappingProxyType({}))


def discover_tools(project_root: Path) -> ToolCatalog:
    """Load every tool file of the project at `project_root` (diagnostics in the catalog)."""
    prefix = f"{MODULE_PACKAGE}.p{_project_key(project_root)}"
    modules: list[ToolModule] = []
    diagnostics: list[Diagnostic] = []
    skill_ids = _skill_ids(project_root)
    local: dict[str, Mapping[str, ToolDefinition]] = {}
    hooks: dict[str, Mapping[str, HookDefinition]] = {}
    for skill_id in skill_ids:
        single, many = _load_skill(project_root, skill_id, f"{prefix}.skills.{skill_id}")
        modules.extend([single, *many] if single else many)
        tools, skill_hooks, problems = _merge_skill(single, many)
        local[skill_id] = MappingProxyType(tools)
        hooks[skill_id] = MappingProxyType(skill_hooks)
        diagnostics.extend(problems)
    shared_modules = [
        load_tool_file(path, project_root=project_root, module_name=f"{prefix}.shared.{path.stem}")
        for path in _py_files(project_root / "tools")
    ]
    modules.extend(shared_modules)
    shared, problems = _merge_shared(shared_modules)
    diagnostics.extend(problems)
    diagnostics.extend(_name_checks(local, shared, set(skill_ids)))
    return ToolCatalog(
        local=MappingProxyType(_without_reserved(local)),
        shared=MappingProxyType(_drop_reserved(shared)),
        hooks=MappingProxyType(hooks),
        modules=tuple(modules),
        diagnostics=tuple(d for m in modules for d in m.diagnostics) + tuple(diagnostics),
    )


def _project_key(project_root: Path) -> str:
    # Distinct projects loaded into one process must not share module names.
    return hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:10]


def _skill_ids(project_root: Path) -> list[str]:
    skills = project_root / "skills"
    if not skills.is_dir():
        return []
    return sorted(
        entry.name
        for entry in skills.iterdir()
        if entry.is_dir() and not entry.name.startswith(("_", "."))
    )


def _py_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.iterdir()
        if path.suffix == ".py" and path.is_file() and not path.name.startswith("_")
    )


def _load_skill(
    project_root: Path, skill_id: str, prefix: str
) -> tuple[ToolModule | None, list[ToolModule]]:
    """(skills/<id>/tools.py, skills/<id>/tools/*.py), loaded."""
    folder = project_root / "skills" / skill_id
    single_path = folder / "tools.py"
    single = (
        load_tool_file(single_path, project_root=project_root, module_name=f"{prefix}.tools")
        if single_path.is_file()
        else None
    )
    many = [
        load_tool_file(
            path, project_root=project_root, module_name=f"{prefix}.tools_dir.{path.stem}"
        )
        for path in _py_files(folder / "tools")
    ]
    return single, many


_Named = TypeVar("_Named", ToolDefinition, HookDefinition)


def _merge_skill(
    single: ToolModule | None, many: list[ToolModule]
) -> tuple[dict[str, ToolDefinition], dict[str, HookDefinition], list[Diagnostic]]:
    """Apply "tools/*.py wins over tools.py"; a clash between two tools/*.py is an error."""
    problems: list[Diagnostic] = []
    tools = {t.name: t for t in single.tools} if single else {}
    hooks = {h.entry: h for h in single.hooks} if single else {}
    folder_tools = _first_wins([(t.name, t) for m in many for t in m.tools], problems)
    folder_hooks = _first_wins([(h.entry, h) for m in many for h in m.hooks], problems)
    for name, definition in folder_tools.items():
        if name in tools:
            problems.append(_overridden(tools[name], definition))
        tools[name] = definition
    for entry, hook in folder_hooks.items():
        if entry in hooks:
            problems.append(_overridden(hooks[entry], hook))
        hooks[entry] = hook
    return tools, hooks, problems


def _first_wins(items: list[tuple[str, _Named]], problems: list[Diagnostic]) -> dict[str, _Named]:
    kept: dict[str, _Named] = {}
    for key, item in items:
        previous = kept.get(key)
        if previous is None:
            kept[key] = item
            continue
        message = (
            f"{item.name!r} is also defined in {previous.module_file} "
            f"(line {previous.line}); that one is used"
        )
        problems.append(
            diag("tool.duplicate_name", item.module_file, item.line, message, key=item.name)
        )
    return kept


def _overridden(
    loser: ToolDefinition | HookDefinition, winner: ToolDefinition | HookDefinition
) -> Diagnostic:
    message = (
        f"{winner.name!r} is defined in both {loser.module_file} and {winner.module_file}; "
        f"the one in {winner.module_file} is used"
    )
    return diag(
        "tool.duplicate_local",
        loser.module_file,
        loser.line,
        message,
        key=winner.name,
        severity="warning",
    )


def _merge_shared(modules: list[ToolModule]) -> tuple[dict[str, ToolDefinition], list[Diagnostic]]:
    problems: list[Diagnostic] = []
    shared = _first_wins([(t.name, t) for m in modules for t in m.tools], problems)
    for hook in (h for m in modules for h in m.hooks):
        message = (
            f"hook {hook.name!r} is ignored: post-write hooks belong in the tools file "
            "of the skill that owns the memory entry"
        )
        problems.append(
            diag("tool.hook.shared", hook.module_file, hook.line, message, severity="warning")
        )
    return shared, problems


def _name_checks(
    local: Mapping[str, Mapping[str, ToolDefinition]],
    shared: Mapping[str, ToolDefinition],
    skill_ids: set[str],
) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    everything = [*shared.values(), *(d for tools in local.values() for d in tools.values())]
    for definition in everything:
        if definition.name in RESERVED_TOOL_NAMES:
            message = f"{definition.name!r} is a framework tool name; rename this tool"
            problems.append(
                diag(
                    "tool.reserved_name",
                    definition.module_file,
                    definition.line,
                    message,
                    key=definition.name,
                )
            )
        elif definition.name in skill_ids:
            message = (
                f"tool {definition.name!r} has the same name as a skill; prose that names "
                "it becomes ambiguous"
            )
            problems.append(
                diag(
                    "tool.name_shadows_skill",
                    definition.module_file,
                    definition.line,
                    message,
                    key=definition.name,
                    severity="warning",
                )
            )
    return problems


def _drop_reserved(tools: Mapping[str, ToolDefinition]) -> Mapping[str, ToolDefinition]:
    return MappingProxyType({n: d for n, d in tools.items() if n not in RESERVED_TOOL_NAMES})


def _without_reserved(
    local: Mapping[str, Mapping[str, ToolDefinition]],
) -> dict[str, Mapping[str, ToolDefinition]]:
    return {skill: _drop_reserved(tools) for skill, tools in local.items()}
