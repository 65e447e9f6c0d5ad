"""The L2 plan validator: model-free checks before a plan runs (plan-cache spec §1.10, §3.10).

    errors = validate(plan, catalog, proposed=True)
    if errors:
        hints = "\\n".join(e.hint() for e in errors)   # sent back to the proposer

Metnos's six checks (known tools, `from_step` to an earlier step, required arguments, top
level types) plus: every `${stepN}` targets an earlier tool step, the path exists in the
producer's `output_schema` when it declares one, enum membership, no unknown argument, no
`runtime_resolved` argument set by the proposer, `RUNTIME` keys in the whitelist, every
`FILLER` and `SLOT` declared, `when` on an earlier step, `final_answer` last and unique, the
step cap. Refs may only point backwards, so the dependency graph is acyclic by construction.

A placeholder counts as present and skips the type check (its value is known only when the
plan runs); only literal values are checked, with the tool's compiled JSON-schema validators
(`keel.tools.validators`). Every error's message is a repair hint. Pure.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Final

from keel.plans.catalog import Catalog, PlanTool
from keel.plans.piping import PIPE_KEY, pipe_source, pipe_target
from keel.plans.plan import FINAL_ANSWER, STEP_CAP, Plan, PlanError, Step
from keel.plans.refs import BadRef, FillerRef, Ref, SlotRef, StepRef, find_refs, refs_in
from keel.tools.frozen import thaw_json
from keel.tools.schema_plan import SchemaNode, plan_for
from keel.tools.validators import Unusable, check, compiled_validator

_RUNTIME_KEYS: Final = (
    "actor, actor_email, lang, channel, turn_id, pref_<name>, now, today, "
    "now_plus_<N>d|h, now_minus_<N>d|h"
)
_MAGIC: Final = ("@count", "@brief")


def validate(
    plan: Plan, catalog: Catalog, *, step_cap: int = STEP_CAP, proposed: bool = False
) -> tuple[PlanError, ...]:
    """Every problem found in `plan` against `catalog` (empty: the plan may run).

    `proposed`: the plan comes from the planner, which may not set `runtime_resolved`
    arguments (a compiled or cached plan may carry them as runtime refs)."""
    errors = _structure(plan, step_cap)
    for step in plan.steps:
        if step.tool != FINAL_ANSWER:
            errors.extend(_step_errors(step, plan, catalog, proposed=proposed))
    final_at = len(plan.steps) + 1
    for located in find_refs(plan.final_message):
        errors.extend(_ref_errors(located.ref, plan, catalog, at=final_at, step=None, arg=None))
    return tuple(errors)


def _structure(plan: Plan, step_cap: int) -> list[PlanError]:
    errors: list[PlanError] = []
    if len(plan.tool_steps) > step_cap:
        errors.append(
            PlanError(
                code="plan.step_cap",
                message=f"{len(plan.tool_steps)} tool steps exceed the cap of {step_cap}; "
                "combine steps or drop ones the answer does not need",
            )
        )
    last = len(plan.steps)
    for step in plan.steps:
        if step.tool == FINAL_ANSWER and step.id != last:
            errors.append(
                PlanError(
                    code="plan.final_answer_misplaced",
                    step=step.id,
                    message="final_answer must be the last step, and only once",
                )
            )
    return errors


def _step_errors(step: Step, plan: Plan, catalog: Catalog, *, proposed: bool) -> list[PlanError]:
    errors: list[PlanError] = []
    source = pipe_source(step)
    if isinstance(source, PlanError):
        errors.append(source)
    elif source is not None and plan.steps[source - 1].tool == FINAL_ANSWER:
        errors.append(
            _error("plan.from_step_invalid", step, PIPE_KEY, "final_answer has no output")
        )
    if step.when_nonempty is not None and not 1 <= step.when_nonempty < step.id:
        errors.append(
            _error("plan.when_invalid", step, None, f"when.nonempty must be 1..{step.id - 1}")
        )
    for name, value in step.args.items():
        for ref in refs_in(value):
            errors.extend(_ref_errors(ref, plan, catalog, at=step.id, step=step.id, arg=name))
    tool = catalog.get(step.tool)
    if tool is None:
        return [_unknown_tool(step, catalog), *errors]
    return errors + _argument_errors(step, tool, proposed=proposed)


def _unknown_tool(step: Step, catalog: Catalog) -> PlanError:
    close = difflib.get_close_matches(step.tool, sorted(catalog), n=3)
    known = close or sorted(catalog)[:8]
    listing = ", ".join(known) if known else "none"
    label = "did you mean" if close else "available tools include"
    return _error("plan.tool_unknown", step, None, f"no tool {step.tool!r}; {label}: {listing}")


def _ref_errors(
    ref: Ref, plan: Plan, catalog: Catalog, *, at: int, step: int | None, arg: str | None
) -> list[PlanError]:
    def error(code: str, message: str) -> list[PlanError]:
        return [PlanError(code=code, message=message, step=step, argument=arg)]

    if isinstance(ref, BadRef):
        if ref.text.startswith("RUNTIME:"):
            return error("plan.runtime_key_unknown", f"RUNTIME keys are: {_RUNTIME_KEYS}")
        return error(
            "plan.bad_ref",
            f"${{{ref.text}}} is not a ref; write ${{stepN.path}}, ${{SLOT:name}}, "
            "${FILLER:name} or ${RUNTIME:key}",
        )
    if isinstance(ref, FillerRef) and ref.name not in plan.fillers:
        return error("plan.filler_undefined", f"filler {ref.name!r} is not declared in fillers")
    if isinstance(ref, SlotRef) and ref.name not in plan.slots:
        return error("plan.slot_undefined", f"slot {ref.name!r} is not declared in slots")
    if isinstance(ref, StepRef):
        if not 1 <= ref.step < at or plan.steps[ref.step - 1].tool == FINAL_ANSWER:
            return error(
                "plan.step_ref_invalid",
                f"step{ref.step} is not an earlier tool step (use 1..{at - 1})",
            )
        unknown = _output_path_problem(plan.steps[ref.step - 1], ref.path, catalog)
        return error("plan.output_path_unknown", unknown) if unknown else []
    return []


def _output_path_problem(producer: Step, path: tuple[str, ...], catalog: Catalog) -> str | None:
    tool = catalog.get(producer.tool)
    node: object = tool.contract.output_schema if tool else None
    walked: list[str] = []
    for segment in path:
        if segment in _MAGIC or not isinstance(node, Mapping):
            return None
        properties = node.get("properties")
        if isinstance(properties, Mapping) and segment in properties:
            node = properties[segment]
        elif segment == "*" or segment.isdigit():
            node = node.get("items")
        elif isinstance(properties, Mapping) and not _open(node):
            where = "${step" + str(producer.id) + "".join("." + s for s in walked) + "}"
            fields = ", ".join(sorted(str(p) for p in properties)) or "none"
            return f"{where} of {producer.tool!r} has no field {segment!r}; fields: {fields}"
        else:
            return None
        walked.append(segment)
    return None


def _argument_errors(step: Step, tool: PlanTool, *, proposed: bool) -> list[PlanError]:
    node = _schema_node(tool.parameters)
    errors = _required_errors(step, tool, node)
    contract = tool.contract
    for name in step.args:
        if name == PIPE_KEY or name.startswith("_"):
            continue
        if name in contract.runtime_resolved:
            if proposed:
                message = "is filled by the runtime from the user's context; leave it out"
                errors.append(_error("plan.runtime_resolved_set", step, name, message))
        elif node is not None and _is_unknown(name, node, tool.parameters):
            known = ", ".join(n for n, _ in node.properties) or "none"
            message = f"{tool.name!r} takes no argument {name!r}; arguments: {known}"
            errors.append(_error("plan.unknown_argument", step, name, message))
    for name, child in node.properties if node is not None else ():
        if name in step.args and not refs_in(step.args[name]):
            errors.extend(_literal_errors(step, name, child))
    return errors


def _required_errors(step: Step, tool: PlanTool, node: SchemaNode | None) -> list[PlanError]:
    piped = pipe_target(tool.contract, tool.parameters) if PIPE_KEY in step.args else None
    errors: list[PlanError] = []
    for name in node.required if node is not None else ():
        if name == piped or name in tool.contract.runtime_resolved:
            continue
        if name not in step.args:
            message = "is required; set it (a ref counts) or pipe a list with from_step"
            errors.append(_error("plan.required_missing", step, name, message))
        elif step.args[name] in ([], ()):
            message = "is required and must not be an empty list"
            errors.append(_error("plan.required_missing", step, name, message))
    return errors


def _literal_errors(step: Step, name: str, child: SchemaNode) -> list[PlanError]:
    validator = compiled_validator(child.key)
    if isinstance(validator, Unusable):
        return []
    failure = check(validator, thaw_json(step.args[name]))
    if failure is None:
        return []
    where = failure.name.removeprefix("data")
    subject = f"{name}{where}" if where else name
    if failure.rule in ("enum", "const"):
        definition = failure.definition
        allowed = definition.get("enum") if isinstance(definition, Mapping) else None
        message = f"{subject} {failure.text}"
        if isinstance(allowed, list):
            message = f"{subject} must be one of: {', '.join(map(json.dumps, allowed))}"
        return [_error("plan.enum_invalid", step, name, message)]
    return [_error("plan.type_mismatch", step, name, f"{subject} {failure.text}")]


def _schema_node(parameters: Mapping[str, object]) -> SchemaNode | None:
    try:
        text = json.dumps(thaw_json(parameters), separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None
    node = plan_for(text)
    return None if isinstance(node, Unusable) or not node.decomposable else node


def _is_unknown(name: str, node: SchemaNode, parameters: Mapping[str, object]) -> bool:
    """Not a declared property, and the schema does not invite extra names."""
    if not node.properties or any(name == known for known, _ in node.properties):
        return False
    return not _open(parameters) and not any(_matches(p, name) for p in node.patterns)


def _matches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return True  # an unreadable pattern is given the benefit of the doubt


def _open(schema: Mapping[str, object]) -> bool:
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, Mapping)


def _error(code: str, step: Step, argument: str | None, message: str) -> PlanError:
    return PlanError(code=code, message=message, step=step.id, argument=argument)
