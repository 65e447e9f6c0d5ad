"""Cross-file checks on a built `AgentDefinition`, returning diagnostics (never raising).

Per-file checks live with their parsers; this module checks what one file says about
another: tools, responses, blocks, skills, MCP servers and tiers a skill names, and
(through `validate_memory`) every memory reference.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel.extract.check import check_gazetteers
from keel.project.definition import AgentDefinition, Skill
from keel.project.diagnostics import Diagnostic, diag
from keel.project.references import check_embeddings
from keel.project.validate_memory import check_response_memory, check_skill_memory
from keel.skills import ActionStep, CallStep, CollectStep, ExecuteToolStep, LinkStep
from keel.skills.steps import SPECIAL_ACTIONS
from keel.tools import ToolCatalog

KNOWN_TIERS = frozenset({"router", "default", "reasoning"})


def validate_definition(definition: AgentDefinition, catalog: ToolCatalog) -> list[Diagnostic]:
    """All cross-file checks, in a stable order."""
    out: list[Diagnostic] = []
    for skill in definition.skills.values():
        if skill.bundled:
            continue
        out.extend(_imports(definition, skill, catalog))
        out.extend(_responses_named(definition, skill))
        out.extend(_tools_named(skill))
        out.extend(_targets(definition, skill))
        out.extend(_tier(definition, skill))
        out.extend(check_skill_memory(definition, skill))
    out.extend(check_response_memory(definition))
    out.extend(check_embeddings(definition.config.references, definition.integrations))
    out.extend(check_gazetteers(definition))
    return out


def _imports(
    definition: AgentDefinition, skill: Skill, catalog: ToolCatalog
) -> Iterator[Diagnostic]:
    doc = skill.document
    missing = set(catalog.missing_imports(i.name for i in doc.import_tools if not i.is_mcp))
    servers = {server.name for server in definition.integrations.mcp_servers}
    for item in doc.import_tools:
        if item.is_mcp and item.mcp_server not in servers:
            yield diag(
                "skill.import_tools.unknown_mcp_server",
                doc.file,
                item.line,
                f"`mcp/{item.mcp_server}:{item.mcp_tool}`: integrations.yml has no MCP server "
                f"named `{item.mcp_server}`",
                key=item.name,
            )
        elif not item.is_mcp and item.name in missing:
            yield diag(
                "skill.import_tools.unknown_tool",
                doc.file,
                item.line,
                f"import_tools lists `{item.name}`, but no file in tools/ defines it",
                key=item.name,
            )


def _response_uses(skill: Skill) -> Iterator[tuple[str, int, str]]:
    """(response name, line, where) for every response the skill names."""
    doc = skill.document
    for trigger in doc.utter:
        yield trigger.response, trigger.line, "utter trigger"
    for constraint in doc.tool_constraints:
        for name, where in (
            (constraint.on_success, "on_success"),
            (constraint.on_failure, "on_failure"),
        ):
            if name is not None:
                yield name, constraint.line, where
        confirmation = constraint.requires_confirmation
        if confirmation is not None:
            for name, where in (
                (confirmation.utter_for_confirmation, "utter_for_confirmation"),
                (confirmation.utter_on_user_denial, "utter_on_user_denial"),
            ):
                if name is not None:
                    yield name, confirmation.line, where
    for block in doc.blocks:
        for step in block.steps:
            if isinstance(step, ActionStep) and step.action not in SPECIAL_ACTIONS:
                yield step.action, step.line, "action"
            elif isinstance(step, CollectStep) and step.utterance is not None:
                yield step.utterance, step.line, "utterance"


def _responses_named(definition: AgentDefinition, skill: Skill) -> Iterator[Diagnostic]:
    for name, line, where in _response_uses(skill):
        if name not in definition.responses:
            yield diag(
                "response.missing",
                skill.document.file,
                line,
                f"{where} names response `{name}`, which no responses.yml defines",
                key=name,
            )


def _offered_names(skill: Skill) -> set[str]:
    names = set(skill.tools)
    names.update(i.mcp_tool or i.name for i in skill.mcp_imports)
    return names


def _tools_named(skill: Skill) -> Iterator[Diagnostic]:
    doc, offered = skill.document, _offered_names(skill)
    for constraint in doc.tool_constraints:
        if constraint.tool not in offered:
            yield diag(
                "skill.tool_constraints.unknown_tool",
                doc.file,
                constraint.line,
                f"tool_constraints names `{constraint.tool}`, which skill `{doc.skill_id}` "
                "does not have (define it in the skill's tools or import it)",
                key=constraint.tool,
            )
    for block in doc.blocks:
        for step in block.steps:
            if isinstance(step, ExecuteToolStep) and step.tool not in offered:
                yield diag(
                    "skill.step.unknown_tool",
                    doc.file,
                    step.line,
                    f"execute_tool `{step.tool}`: skill `{doc.skill_id}` has no such tool",
                    key=step.tool,
                )
    for token in doc.tokens:
        if token.kind == "tool" and token.target not in offered:
            yield diag(
                "skill.prose.unknown_tool",
                doc.file,
                token.line,
                f"{token.text}: skill `{doc.skill_id}` has no such tool",
                key=token.target,
                severity="warning",
            )


def _targets(definition: AgentDefinition, skill: Skill) -> Iterator[Diagnostic]:
    doc = skill.document
    blocks = {block.block_id for block in doc.blocks}
    for token in doc.tokens:
        if token.kind == "skill" and token.target not in definition.skills:
            yield diag(
                "skill.prose.unknown_skill",
                doc.file,
                token.line,
                f"{token.text}: there is no skill with that id",
                key=token.target,
            )
    for block in doc.blocks:
        for step in block.steps:
            if isinstance(step, CallStep | LinkStep):
                known = step.target in definition.skills or (
                    isinstance(step, CallStep) and step.target in blocks
                )
                if not known:
                    kind = "call" if isinstance(step, CallStep) else "link"
                    yield diag(
                        "skill.step.unknown_target",
                        doc.file,
                        step.line,
                        f"{kind} `{step.target}` names no block of this skill and no skill",
                        key=step.target,
                    )


def _tier(definition: AgentDefinition, skill: Skill) -> Iterator[Diagnostic]:
    doc = skill.document
    known = KNOWN_TIERS | set(definition.integrations.tiers)
    if doc.tier is not None and doc.tier not in known:
        yield diag(
            "skill.frontmatter.unknown_tier",
            doc.file,
            doc.line_of("tier"),
            f"tier `{doc.tier}` is not one of {', '.join(sorted(known))}",
            key=doc.tier,
        )
