"""Skill files of the generated agent: `skill.md`, `memory.yml` and `responses.yml`.

Pure text from a `SkillPlan` and a seeded random generator (for the wording only).
"""

from __future__ import annotations

import json
import random

from plan import ProjectPlan, SkillPlan, ToolPlan

FILLER = (
    "Keep each reply short and say what you will do before you do it.",
    "Only state figures, dates and references that a tool returned in this conversation.",
    "If the user asks for something this skill does not cover, say so and offer to hand over.",
    "When a tool fails, tell the user in plain words and suggest the next step.",
    "Never guess a {record} reference: ask for it when it is missing.",
    "Repeat the {record} reference back once so the user can spot a typo.",
    "If the user sounds frustrated, acknowledge it in one sentence before going on.",
    "Prefer one question at a time; do not ask for details you already have.",
    "Use the user's own words for the {record} when you summarise what you did.",
    "Do not mention internal tool names to the user.",
)


def _q(text: str) -> str:
    """A YAML double-quoted scalar."""
    return json.dumps(text)


def _filler(rng: random.Random, skill: SkillPlan, count: int) -> str:
    return " ".join(s.format(record=skill.record) for s in rng.sample(FILLER, count))


def frontmatter(skill: SkillPlan, plan: ProjectPlan) -> list[str]:
    """The YAML frontmatter lines, between the `---` fences."""
    sid = skill.idea.skill_id
    examples = ", ".join(f'"{e}"' for e in skill.idea.examples)
    lines = [
        "---",
        f"name: {skill.idea.name}",
        "description: >",
        f"  Help the user {skill.idea.purpose}. Activate for {examples}.",
    ]
    if skill.requires:
        lines.append(f"requires: {_q(skill.requires)}")
    if skill.complete == "condition":
        lines += ["complete_when:", f'  condition: "session.{sid}.done == True"']
    elif skill.complete == "criteria":
        lines += [
            "complete_when:",
            "  criteria:",
            f"    - The user confirmed the {skill.record} details are right.",
            "    - The user has no further question about this request.",
        ]
    if skill.imports:
        lines += ["import_tools:", *(f"  - {name}" for name in skill.imports)]
    lines += _constraints(skill)
    if skill.intro:
        lines += ["utter:", f"  - utter_{sid}_intro:", "      on: activate"]
    if skill.tier:
        lines.append(f"tier: {skill.tier}")
    lines.append(f"max_turns: {skill.max_turns}")
    lines += ["examples:", *(f"  - {_q(e)}" for e in skill.idea.examples), "---"]
    return lines


def _constraints(skill: SkillPlan) -> list[str]:
    sid = skill.idea.skill_id
    lines = ["tool_constraints:"] if skill.constraints else []
    for c in skill.constraints:
        lines += [f"  - {c.tool}:", f"      requires: {_q(c.requires)}"]
        if c.confirm:
            lines += [
                "      requires_confirmation:",
                "        enabled: true",
                f"        utter_for_confirmation: utter_{sid}_confirm",
                f"        utter_on_user_denial: utter_{sid}_denied",
            ]
        if c.on_success:
            lines.append(f"      on_success: utter_{sid}_done")
    return lines


def prose(skill: SkillPlan, plan: ProjectPlan, rng: random.Random) -> list[str]:
    """The markdown body for the model (nothing for a block-only skill)."""
    if skill.kind == "blocks":
        return []
    sid = skill.idea.skill_id
    first = skill.tools[0] if skill.tools else None
    paras = [
        f"# {skill.idea.name}",
        f"You are helping @memory.project.customer_name {skill.idea.purpose}. "
        + _filler(rng, skill, 2),
    ]
    if skill.kind == "mixed":
        paras.append(f"Start with @block.details: it asks for the {skill.record} and looks it up.")
    if first:
        paras.append(
            f"Ask for the {skill.record} reference and record it as reference, then call "
            f"@tool.{first} and explain the result. " + _filler(rng, skill, 1)
        )
    for value in skill.values[: rng.randint(1, len(skill.values))]:
        paras.append(
            f"if: session.{sid}.{skill.choice} == '{value}'\n"
            f"The user chose {value.replace('_', ' ')}. " + _filler(rng, skill, 2)
        )
    paras.append(
        f"if: session.{sid}.reference != None\n"
        f"The {skill.record} is @memory.{sid}.reference. Use it in every tool call that "
        f"takes a reference. " + _filler(rng, skill, 1)
    )
    if skill.complete == "condition":
        paras.append("When the user says the request is handled, record done as true.")
    return paras


def block(skill: SkillPlan, plan: ProjectPlan) -> list[str]:
    """The ordered block of a `mixed` or `blocks` skill."""
    if skill.kind == "prose":
        return []
    sid = skill.idea.skill_id
    tool = _block_tool(skill, plan)
    block_id = "main" if skill.kind == "blocks" else "details"
    lines = [
        f":::ordered_block id={block_id}",
        "steps:",
        "  - id: ask_reference",
        "    collect: reference",
        f"    utterance: utter_ask_{sid}_reference",
    ]
    if tool is not None:
        lines += ["  - id: lookup", f"    execute_tool: {tool.name}"]
        if tool.required:
            lines.append("    parameters:")
        for p in tool.required:
            value = f"session.{sid}.reference" if p.name == "reference" else "everything"
            lines.append(f"      {p.name}: {value}")
    lines += [
        "  - id: route",
        "    noop: true",
        "    next:",
        f"      - if: session.{sid}.{skill.choice} == None",
        "        then: ask_choice",
        "      - else: finish",
        "  - id: ask_choice",
        f"    collect: {skill.choice}",
        f"    utterance: utter_ask_{sid}_{skill.choice}",
        "  - id: finish",
        f"    action: utter_{sid}_done",
        ":::",
    ]
    return lines


def _block_tool(skill: SkillPlan, plan: ProjectPlan) -> ToolPlan | None:
    tools = [plan.tool(n) for n in skill.tools]
    confirmed = {c.tool for c in skill.constraints if c.confirm}
    usable = [t for t in tools if t.name not in confirmed]
    with_reference = [t for t in usable if any(p.name == "reference" for p in t.params)]
    chosen = with_reference or usable
    return chosen[0] if chosen else None


def skill_md(skill: SkillPlan, plan: ProjectPlan, rng: random.Random) -> str:
    """The whole `skill.md`."""
    body = "\n\n".join(prose(skill, plan, rng))
    parts = ["\n".join(frontmatter(skill, plan)), body, "\n".join(block(skill, plan))]
    return "\n\n".join(p for p in parts if p) + "\n"


def memory_yml(skill: SkillPlan) -> str:
    """`memory.yml`: reference (public), the choice, done and the extra entries."""
    record, choice = skill.record, skill.choice
    values = ", ".join(skill.values)
    lines = [
        "schema:",
        "  public:",
        "    reference:",
        "      type: text",
        "      llm_settable: true",
        f"      description: The {record} reference the user gave, e.g. NW-{record[:3]}-1042.",
        "  private:",
        f"    {choice}:",
        "      type: categorical",
        f"      enum_values: [{values}]",
        "      llm_settable: true",
        f"      description: Which {choice.replace('_', ' ')} the user wants ({values}).",
        "    done:",
        "      type: bool",
        "      llm_settable: true",
        "      description: True once the user says the request is handled.",
    ]
    described = {
        "amount": ("float", "The amount the user mentioned, in euros."),
        "note": ("text", f"A one-line note about the {record} for the next agent."),
        "last_result": ("text", "What the last lookup of this skill returned, in short."),
    }
    for name in skill.extra_entries:
        kind, text = described[name]
        settable = "true" if name != "last_result" else "false"
        lines += [
            f"    {name}:",
            f"      type: {kind}",
            f"      llm_settable: {settable}",
            f"      description: {text}",
        ]
    return "\n".join(lines) + "\n"


def responses_yml(skill: SkillPlan) -> str:
    """`responses.yml`: the asks, the done line, confirmation and intro texts."""
    sid, record, choice = skill.idea.skill_id, skill.record, skill.choice
    lines = [
        "responses:",
        f"  utter_ask_{sid}_reference:",
        f'    - text: "What is the {record} reference? It starts with NW."',
        f"  utter_ask_{sid}_{choice}:",
        f'    - text: "Which {choice.replace("_", " ")} would you like?"',
        "      buttons:",
    ]
    for value in skill.values:
        lines += [
            f'        - title: "{value.replace("_", " ").capitalize()}"',
            f'          payload: "set:session.{sid}.{choice}={value}"',
        ]
    lines += [
        f"  utter_{sid}_done:",
        f'    - text: "Done: your {record} {{session.{sid}.reference}} is sorted."',
        f"      condition: session.{sid}.reference != None",
        f'    - text: "Done: your {record} request is sorted."',
        f"  utter_{sid}_confirm:",
        f'    - text: "Shall I go ahead with this change to your {record}?"',
        "      buttons:",
        '        - title: "Yes, go ahead"',
        '          payload: "Yes"',
        '        - title: "No"',
        '          payload: "No"',
        f"  utter_{sid}_denied:",
        '    - text: "All right, I have left it as it is."',
        f"  utter_{sid}_intro:",
        f'    - text: "Let\'s look at your {record} together."',
    ]
    return "\n".join(lines) + "\n"
