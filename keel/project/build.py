"""Project files -> one immutable `AgentDefinition` (pure: no file system, no imports).

`keel.project.load.load_project` reads the files and tool modules and calls `build`.
Every problem is a `Diagnostic`; the definition is returned only when there are no errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from keel.memory import MemoryField, MemorySchema, parse_project_memory, parse_skill_memory
from keel.project.config import AgentConfig, parse_agent_config
from keel.project.definition import AgentDefinition, Skill
from keel.project.endpoints import EndpointsConfig, read_endpoints
from keel.project.files import ProjectFiles, SourceFile
from keel.project.integrations import IntegrationsConfig, parse_integrations
from keel.project.response_delivery import merge_responses
from keel.project.response_model import Response
from keel.project.responses import parse_responses
from keel.project.validate import validate_definition
from keel.skills import SkillDocument, load_default_skills, parse_skill, read_default_responses
from keel.skills.bundled import BUNDLED_PREFIX
from keel.source.diagnostics import Diagnostic, diag, has_errors
from keel.source.yaml import load_yaml
from keel.tools import ToolCatalog

RESERVED_SKILL_IDS = frozenset({"project", "system"})
"""Folder names that would collide with memory namespaces."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Parsed:
    """What the per-file parsers produced, before cross-file checks."""

    config: AgentConfig | None
    integrations: IntegrationsConfig | None
    memory: MemorySchema
    responses: Mapping[str, Response]
    documents: Mapping[str, tuple[SkillDocument, bool]]
    """skill id -> (document, bundled)."""
    endpoints: EndpointsConfig


def _yaml(source: SourceFile | None, out: list[Diagnostic]) -> object:
    if source is None:
        return None
    data, diagnostics = load_yaml(source.text, source.rel)
    out.extend(diagnostics)
    if data is None and not diagnostics:
        return {}  # an empty file: let the parser say what is missing
    return data


def _memory(files: ProjectFiles, reserved: set[str], out: list[Diagnostic]) -> MemorySchema:
    groups: list[tuple[MemoryField, ...]] = []
    if files.memory is not None:
        data = _yaml(files.memory, out)
        if data is not None:
            fields, diagnostics = parse_project_memory(data, files.memory.rel)
            out.extend(diagnostics)
            groups.append(fields)
    for folder in files.skills:
        if folder.memory is None or folder.skill_id in reserved:
            continue
        data = _yaml(folder.memory, out)
        if data is not None:
            fields, diagnostics = parse_skill_memory(folder.skill_id, data, folder.memory.rel)
            out.extend(diagnostics)
            groups.append(fields)
    return MemorySchema.of(*groups)


def _documents(files: ProjectFiles, out: list[Diagnostic]) -> dict[str, tuple[SkillDocument, bool]]:
    documents = {doc.skill_id: (doc, True) for doc in load_default_skills()}
    for folder in files.skills:
        if folder.skill_id in RESERVED_SKILL_IDS:
            out.append(
                diag(
                    "skill.reserved_id",
                    f"skills/{folder.skill_id}",
                    None,
                    f"`{folder.skill_id}` is a memory namespace, not a skill id; rename the folder",
                    key=folder.skill_id,
                )
            )
            continue
        if folder.skill_md is None:
            continue
        document, diagnostics = parse_skill(
            folder.skill_id, folder.skill_md.text, folder.skill_md.rel
        )
        out.extend(diagnostics)
        if document is not None:
            documents[folder.skill_id] = (document, False)
    return documents


def _responses(files: ProjectFiles, out: list[Diagnostic]) -> Mapping[str, Response]:
    bundled_data, bundled_diags = load_yaml(
        read_default_responses(), f"{BUNDLED_PREFIX}/responses.yml"
    )
    bundled, more = parse_responses(bundled_data, f"{BUNDLED_PREFIX}/responses.yml")
    out.extend(bundled_diags + more)
    project: list[tuple[Response, ...]] = []
    sources = [files.responses, *(f.responses for f in files.skills)]
    for source in sources:
        data = _yaml(source, out)
        if source is not None and data is not None:
            parsed, diagnostics = parse_responses(data, source.rel)
            out.extend(diagnostics)
            project.append(parsed)
    merged, diagnostics = merge_responses(bundled, project)
    out.extend(diagnostics)
    return merged


def _parse(files: ProjectFiles, env: Mapping[str, str], out: list[Diagnostic]) -> _Parsed:
    config: AgentConfig | None = None
    agent_data = _yaml(files.agent, out)
    if files.agent is not None and agent_data is not None:
        config, diagnostics = parse_agent_config(agent_data, files.agent.rel)
        out.extend(diagnostics)
    integrations: IntegrationsConfig | None = None
    integrations_data = _yaml(files.integrations, out)
    if files.integrations is not None and integrations_data is not None:
        integrations, diagnostics = parse_integrations(
            integrations_data, files.integrations.rel, env=env
        )
        out.extend(diagnostics)
    reserved = set(RESERVED_SKILL_IDS)
    return _Parsed(
        config=config,
        integrations=integrations,
        memory=_memory(files, reserved, out),
        responses=_responses(files, out),
        documents=_documents(files, out),
        endpoints=_endpoints(files, env, out),
    )


def _endpoints(
    files: ProjectFiles, env: Mapping[str, str], out: list[Diagnostic]
) -> EndpointsConfig:
    if files.endpoints is None:
        return EndpointsConfig()
    config, diagnostics = read_endpoints(files.endpoints.text, files.endpoints.rel, env)
    out.extend(diagnostics)
    return config


def _skills(parsed: _Parsed, catalog: ToolCatalog) -> Mapping[str, Skill]:
    skills: dict[str, Skill] = {}
    for skill_id, (document, bundled) in sorted(parsed.documents.items()):
        imports = [i.name for i in document.import_tools if not i.is_mcp]
        skills[skill_id] = Skill(
            document=document,
            tools=catalog.tools_for_skill(skill_id, imports),
            hooks=catalog.hooks_for_skill(skill_id),
            mcp_imports=tuple(i for i in document.import_tools if i.is_mcp),
            bundled=bundled,
        )
    return MappingProxyType(skills)


def build(
    files: ProjectFiles, catalog: ToolCatalog, env: Mapping[str, str]
) -> tuple[AgentDefinition | None, list[Diagnostic]]:
    """Parse every file, resolve tools, run the cross-file checks."""
    out: list[Diagnostic] = list(catalog.diagnostics)
    parsed = _parse(files, env, out)
    if parsed.config is None or parsed.integrations is None:
        if not has_errors(out):
            out.append(
                diag("project.incomplete", ".", None, "agent.yml or integrations.yml unusable")
            )
        return None, _ordered(out)
    definition = AgentDefinition(
        root=files.root,
        config=parsed.config,
        integrations=parsed.integrations,
        memory=parsed.memory,
        responses=parsed.responses,
        skills=_skills(parsed, catalog),
        shared_tools=MappingProxyType(dict(catalog.shared)),
        endpoints=parsed.endpoints,
    )
    out.extend(validate_definition(definition, catalog))
    out = _ordered(out)
    if has_errors(out):
        return None, out
    warnings = tuple(d for d in out if d.severity == "warning")
    return _with_warnings(definition, warnings), out


def _with_warnings(definition: AgentDefinition, warnings: Sequence[Diagnostic]) -> AgentDefinition:
    return replace(definition, warnings=tuple(warnings))


def _ordered(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Stable order for output: by file, then line, then code; duplicates dropped."""
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=lambda d: (d.file, d.line or 0, d.code))
