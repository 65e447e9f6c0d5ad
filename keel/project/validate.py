"""Cross-file checks on a built `AgentDefinition`, returning diagnostics (never raising).

Per-file checks live with their parsers; this module checks what one file says about
another: tools, responses, blocks, skills, MCP servers and tiers a skill names, and
(through `validate_memory`) every memory reference.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel.project.definition import AgentDefinition, Skill
from keel.project.references import check_embeddings
from keel.project.step_tools import check_step_tools_offered
from keel.project.validate_memory import (
    check_gazetteers,
    check_response_memory,
    check_skill_memory,
)
from keel.skills import (
    ActionStep,
    CallStep,
    CollectStep,
    ExecuteToolStep,
    LinkStep,
    OrderedBlock,
)
from keel.skills.steps import SPECIAL_ACTIONS
from keel.source.diagnostics import Diagnostic, diag
from keel.source.suggest import did_you_mean
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
        out.extend(_after_confirmation(definition, skill))
        out.extend(check_step_tools_offered(skill))
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
                f"named `{item.mcp_server}`" + did_you_mean(item.mcp_server or "", servers),
                key=item.name,
            )
        elif not item.is_mcp and item.name in missing:
            yield diag(
                "skill.import_tools.unknown_tool",
                doc.file,
                item.line,
                f"import_tools lists `{item.name}`, but no file in tools/ defines it"
                + did_you_mean(item.name, catalog.shared),
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
                f"{where} names response `{name}`, which no responses.yml defines"
                + did_you_mean(name, definition.responses),
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
                "does not have (define it in the skill's tools or import it)"
                + did_you_mean(constraint.tool, offered),
                key=constraint.tool,
            )
    for block in doc.blocks:
        for step in block.steps:
            if isinstance(step, ExecuteToolStep) and step.tool not in offered:
                yield diag(
                    "skill.step.unknown_tool",
                    doc.file,
                    step.line,
                    f"execute_tool `{step.tool}`: skill `{doc.skill_id}` has no such tool"
                    + did_you_mean(step.tool, offered),
                    key=step.tool,
                )
    for token in doc.tokens:
        if token.kind == "tool" and token.target not in offered:
            yield diag(
                "skill.prose.unknown_tool",
                doc.file,
                token.line,
                f"{token.text}: skill `{doc.skill_id}` has no such tool"
                + did_you_mean(token.target, offered),
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
                f"{token.text}: there is no skill with that id"
                + did_you_mean(token.target, definition.skills),
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
                        f"{kind} `{step.target}` names no block of this skill and no skill"
                        + did_you_mean(
                            step.target,
                            [*definition.skills, *(blocks if kind == "call" else ())],
                        ),
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


def _confirmed(skill: Skill, tool: str) -> bool:
    for constraint in skill.document.tool_constraints:
        confirmation = constraint.requires_confirmation
        if constraint.tool == tool and confirmation is not None and confirmation.enabled:
            return True
    return False


def _writes(definition: AgentDefinition, skill: Skill, tool: str) -> set[str]:
    """Qualified memory keys tool `tool` sets (as far as its source shows)."""
    found = skill.tools.get(tool)
    keys: set[str] = set()
    for write in found.memory_writes if found is not None else ():
        if write.method == "set" and write.key is not None:
            field = definition.memory.resolve(write.key, skill.skill_id)
            if field is not None:
                keys.add(field.key)
    return keys


def _placeholder_keys(definition: AgentDefinition, skill: Skill, name: str) -> dict[str, str]:
    """Qualified key -> placeholder as written, for response `name`'s placeholders."""
    response = definition.responses.get(name)
    keys: dict[str, str] = {}
    for placeholder in response.placeholders if response is not None else ():
        entry = placeholder.entry
        qualified = f"{placeholder.namespace}.{entry}" if placeholder.namespace else entry
        field = definition.memory.resolve(qualified, skill.skill_id)
        if field is not None:
            keys.setdefault(field.key, placeholder.raw)
    return keys


def _after_confirmation(definition: AgentDefinition, skill: Skill) -> Iterator[Diagnostic]:
    """An `action` the pointer always reaches from a confirmation-gated `execute_tool` step,
    filling a placeholder from memory that tool writes: after a denial the turn ends with
    the pointer there (spec §5.6), the tool never ran, and the placeholder has no value."""
    for block in skill.document.blocks:
        for step in block.steps:
            if not isinstance(step, ExecuteToolStep) or not _confirmed(skill, step.tool):
                continue
            target = _unconditional_next(block, step)
            if not isinstance(target, ActionStep) or target.action in SPECIAL_ACTIONS:
                continue
            used = _placeholder_keys(definition, skill, target.action)
            missing = sorted(used[key] for key in _writes(definition, skill, step.tool) & set(used))
            if missing:
                yield diag(
                    "skill.step.confirmation_result_unguarded",
                    skill.document.file,
                    target.line,
                    f"action `{target.action}` follows execute_tool `{step.tool}`, which asks "
                    f"for confirmation, and uses {', '.join(missing)}, which the tool writes: "
                    "after a denial the tool has not run. Branch with `next:` on the step "
                    "(for example on one of those values)",
                    key=target.action,
                    severity="warning",
                )


def _unconditional_next(block: OrderedBlock, step: ExecuteToolStep) -> object:
    """The step `step` always leads to (None when its `next:` branches)."""
    if step.next is None:
        return block.following(step.id)
    return block.step(step.next) if isinstance(step.next, str) else None
