"""Cross-file checks about memory: every reference must name declared, readable memory.

Covers conditions everywhere (skill, steps, branches, `if:` paragraphs, `if:` lines of step
instructions, utter triggers, tool constraints, response variants), `@memory` tokens,
`collect:` and `set_memory:` entries, `execute_tool` parameters, tool memory writes,
post-write hooks and `set:` buttons; and every gazetteer an `extract:` attribute names can
be read.
"""

from __future__ import annotations

from collections.abc import Iterator

from keel.conditions import Condition
from keel.extract.gazetteers import GazetteerError, load_gazetteer
from keel.memory import MemorySchema, can_read, check_hooks, check_write
from keel.memory.access import UNDECLARED
from keel.project.definition import AgentDefinition, Skill
from keel.skills import (
    CollectStep,
    ExecuteToolStep,
    InstructionsStep,
    SetMemoryStep,
    SkillDocument,
)
from keel.skills.steps import Step
from keel.source.diagnostics import Diagnostic, diag
from keel.source.suggest import did_you_mean


def skill_conditions(doc: SkillDocument) -> Iterator[tuple[Condition, int]]:
    """Every condition in a skill document, with the line it is written on."""
    if doc.requires is not None:
        yield doc.requires, doc.line_of("requires")
    if doc.complete_when is not None and doc.complete_when.condition is not None:
        yield doc.complete_when.condition, doc.complete_when.line
    for constraint in doc.tool_constraints:
        if constraint.requires is not None:
            yield constraint.requires, constraint.line
    for trigger in doc.utter:
        if trigger.when is not None:
            yield trigger.when, trigger.line
    for paragraph in doc.paragraphs:
        if paragraph.condition is not None:
            yield paragraph.condition, max(paragraph.line - 1, 1)
    for block in doc.blocks:
        for step in block.steps:
            yield from _step_conditions(step)


def _step_conditions(step: Step) -> Iterator[tuple[Condition, int]]:
    complete_when = getattr(step, "complete_when", None)
    if isinstance(complete_when, Condition):
        yield complete_when, step.line
    if isinstance(step, InstructionsStep):
        for part in step.parts:
            if part.condition is not None:
                yield part.condition, max(part.line - 1, 1)
    if isinstance(step.next, tuple):
        for branch in step.next:
            if branch.condition is not None:
                yield branch.condition, branch.line


def _close_keys(schema: MemorySchema, key: str, reader: str | None) -> str:
    """A "did you mean" for an unknown `namespace.entry`, among what `reader` may read."""
    known = [f"session.{f.key}" for f in schema.fields if reader is None or can_read(f, reader)]
    return did_you_mean(f"session.{key}", known)


def _close_entries(schema: MemorySchema, entry: str, skill_id: str) -> str:
    """A "did you mean" for an unknown bare or qualified entry a skill's step writes."""
    own = [f.name for f in schema.fields_of(skill_id)]
    project = [f.name for f in schema.fields_of("project") if f.name not in own]
    qualified = [f.key for f in schema.fields]
    return did_you_mean(entry, qualified if "." in entry else [*own, *project])


def _reference(
    schema: MemorySchema, key: str, reader: str | None, file: str, line: int, what: str
) -> Diagnostic | None:
    """`key` is `namespace.entry`; reader None means "any skill" (global responses)."""
    field = schema.field(key)
    if field is None:
        return diag(
            "memory.unknown_reference",
            file,
            line,
            f"{what} reads `session.{key}`, which no memory.yml declares"
            + _close_keys(schema, key, reader),
            key=key,
        )
    if reader is not None and not can_read(field, reader):
        return diag(
            "memory.unreadable_reference",
            file,
            line,
            f"{what} reads `session.{key}`, which skill `{reader}` may not read",
            key=key,
        )
    return None


def check_skill_memory(definition: AgentDefinition, skill: Skill) -> list[Diagnostic]:
    """Memory checks for one skill."""
    doc, schema = skill.document, definition.memory
    out: list[Diagnostic] = []
    for condition, line in skill_conditions(doc):
        for ref in sorted(condition.references, key=lambda r: r.key):
            found = _reference(schema, ref.key, doc.skill_id, doc.file, line, "condition")
            if found is not None:
                out.append(found)
    for token in doc.tokens:
        if token.kind == "memory":
            found = _reference(schema, token.target, doc.skill_id, doc.file, token.line, "token")
            if found is not None:
                out.append(found)
    out.extend(_step_memory(schema, doc))
    out.extend(_tool_writes(schema, skill))
    out.extend(_hooks(schema, skill))
    return out


def _step_memory(schema: MemorySchema, doc: SkillDocument) -> Iterator[Diagnostic]:
    for block in doc.blocks:
        for step in block.steps:
            if isinstance(step, CollectStep):
                yield from _collect(schema, doc, step)
            elif isinstance(step, SetMemoryStep):
                for entry in step.values:
                    if schema.resolve(entry, doc.skill_id) is None:
                        yield diag(
                            "skill.step.set_memory_undeclared",
                            doc.file,
                            step.line,
                            f"set_memory writes `{entry}`, which neither skill "
                            f"`{doc.skill_id}` nor the project declares"
                            + _close_entries(schema, entry, doc.skill_id),
                            key=entry,
                        )
            elif isinstance(step, ExecuteToolStep):
                yield from _parameters(schema, doc, step)


def _collect(schema: MemorySchema, doc: SkillDocument, step: CollectStep) -> Iterator[Diagnostic]:
    field = schema.resolve(step.entry, doc.skill_id)
    if field is None:
        yield diag(
            "skill.step.collect_undeclared",
            doc.file,
            step.line,
            f"collect `{step.entry}`: skill `{doc.skill_id}` declares no such memory entry"
            + did_you_mean(step.entry, [f.name for f in schema.fields_of(doc.skill_id)]),
            key=step.entry,
        )
    elif field.namespace != doc.skill_id:
        yield diag(
            "skill.step.collect_project_field",
            doc.file,
            step.line,
            f"collect `{step.entry}` resolves to `{field.key}`; a collect step may only "
            "write the skill's own memory",
            key=step.entry,
        )


def _parameters(
    schema: MemorySchema, doc: SkillDocument, step: ExecuteToolStep
) -> Iterator[Diagnostic]:
    # Malformed `session.` strings are reported by the skill parser; here only memory.
    for reference in step.references.values():
        found = _reference(schema, reference.key, doc.skill_id, doc.file, step.line, "parameter")
        if found is not None:
            yield found


def _tool_writes(schema: MemorySchema, skill: Skill) -> Iterator[Diagnostic]:
    """A literal key declared nowhere is an error; one that is declared but not writable
    while this skill is active (another skill's entry, system memory) is a warning: Mantle
    loads it, and the write is refused at run time (`memory.write.*`, told to the tool)."""
    for definition in skill.tools.values():
        for write in definition.memory_writes:
            if write.key is None:
                continue
            decision = check_write(schema, write.key, "tool", skill.skill_id, False)
            if decision.allowed:
                continue
            owners = _declared_by(schema, write.key)
            if decision.code == UNDECLARED and not owners:
                yield diag(
                    "memory.undeclared_write",
                    definition.module_file,
                    write.line,
                    f"tool `{definition.name}` writes `{write.key}`, which no memory.yml declares",
                    key=write.key,
                )
                continue
            where = f"declared by {', '.join(f'`{o}`' for o in owners)}" if owners else "declared"
            yield diag(
                "memory.write_not_writable",
                definition.module_file,
                write.line,
                f"tool `{definition.name}` writes `{write.key}` ({where}), which it may not "
                f"write while skill `{skill.skill_id}` is active: that write is refused at "
                f"run time. Declare the entry in `{skill.skill_id}` or the project, or write "
                "it only from the skill that owns it",
                key=write.key,
                severity="warning",
            )


def _declared_by(schema: MemorySchema, key: str) -> list[str]:
    """Namespaces declaring `key` (qualified: its own namespace; bare: every entry of
    that name)."""
    if "." in key:
        field = schema.field(key)
        return [field.namespace] if field is not None else []
    return sorted({f.namespace for f in schema.fields if f.name == key})


def _hooks(schema: MemorySchema, skill: Skill) -> Iterator[Diagnostic]:
    collect_owned = skill.collect_owned
    for entry, hook in sorted(skill.hooks.items()):
        yield from check_hooks(
            schema, skill.skill_id, {entry: hook.line}, collect_owned, file=hook.module_file
        )


def check_response_memory(definition: AgentDefinition) -> list[Diagnostic]:
    """Response variant conditions, placeholders and `set:` buttons name declared memory."""
    schema = definition.memory
    out: list[Diagnostic] = []
    for response in definition.responses.values():
        for variant in response.variants:
            line = variant.line or response.line or 1
            if variant.condition is not None:
                for ref in sorted(variant.condition.references, key=lambda r: r.key):
                    found = _reference(schema, ref.key, None, response.file, line, "condition")
                    if found is not None:
                        out.append(found)
            for placeholder in variant.placeholders:
                if placeholder.namespace is None:
                    continue
                key = f"{placeholder.namespace}.{placeholder.entry}"
                if schema.field(key) is None:
                    out.append(
                        diag(
                            "response.placeholder.unknown",
                            response.file,
                            placeholder.line or line,
                            f"placeholder {placeholder.raw} names undeclared memory; "
                            "it never has a value, so the variant is never sent",
                            key=key,
                            severity="warning",
                        )
                    )
            out.extend(_set_buttons(schema, response.file, variant.buttons))
    return out


def _set_buttons(schema: MemorySchema, file: str, buttons: object) -> Iterator[Diagnostic]:
    if not isinstance(buttons, tuple):
        return
    for button in buttons:
        payload = getattr(button, "set_payload", None)
        if payload is None:
            continue
        active = None if payload.namespace == "project" else payload.namespace
        decision = check_write(schema, payload.key, "button", active, False)
        if not decision.allowed:
            code = (
                "response.buttons.set_target_undeclared"
                if decision.code == "memory.write.undeclared"
                else "response.buttons.set_target_not_writable"
            )
            yield diag(
                code, file, payload.line, f"`set:` button: {decision.reason}", key=payload.key
            )


def check_gazetteers(definition: AgentDefinition) -> list[Diagnostic]:
    """`memory.bad_extract` for each gazetteer file that is missing or unreadable."""
    out: list[Diagnostic] = []
    for field in definition.memory.fields:
        spec = field.extract
        if spec is None or spec.gazetteer is None:
            continue
        try:
            load_gazetteer(definition.root, spec.gazetteer)
        except GazetteerError as exc:
            message = f"`extract` of `{field.key}`: {exc}"
            out.append(diag("memory.bad_extract", field.file, field.line, message, key=field.key))
    return out
