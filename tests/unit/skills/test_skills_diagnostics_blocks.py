"""One case per ordered-block / step / condition / YAML diagnostic, with its exact line.

Cases share a frontmatter (lines 1-4) and a prose line that enters block `main`, so only
the finding under test is reported. The expected line ends with " «".
"""

from __future__ import annotations

import textwrap

import pytest
from skilltext import codes, marked, parse_text

HEAD = "---\nname: N\ndescription: D\n---\nRun @block.main.\n"
PLAIN = "---\nname: N\ndescription: D\n---\nNo block named here.\n"
"""For blocks that end up without an id: a token naming them would be reported too."""


def block(steps: str, fence: str = ":::ordered_block id=main", head: str = HEAD) -> str:
    """A skill text whose body is `head` plus one fenced block (lines from 6 on)."""
    return head + fence + "\n" + textwrap.dedent(steps).strip("\n") + "\n:::\n"


CASES = [
    # -- fences and block bodies -----------------------------------------------------
    (
        "unclosed fence at end of file",
        "skill.block.unclosed_fence",
        "error",
        HEAD + ":::ordered_block id=main «\nsteps:\n  - id: a\n    action: utter_a\n",
    ),
    (
        "unclosed fence before another fence",
        "skill.block.unclosed_fence",
        "error",
        HEAD
        + ":::ordered_block id=other «\nsteps: []\n"
        + ":::ordered_block id=main\nsteps:\n  - id: a\n    action: utter_a\n:::\n",
    ),
    (
        "fence without id",
        "skill.block.missing_id",
        "error",
        block("steps:\n  - id: a\n    action: utter_a", fence=":::ordered_block «", head=PLAIN),
    ),
    (
        "block id as a yaml key",
        "skill.block.id_as_yaml_key",
        "error",
        block(
            "id: main «\nsteps:\n  - id: a\n    action: utter_a",
            fence=":::ordered_block",
            head=PLAIN,
        ),
    ),
    (
        "block id wrapping steps",
        "skill.block.id_as_yaml_key",
        "error",
        block(
            "main: «\n  steps:\n    - id: a\n      action: utter_a",
            fence=":::ordered_block",
            head=PLAIN,
        ),
    ),
    (
        "duplicate block id",
        "skill.block.duplicate_id",
        "error",
        block("steps:\n  - id: a\n    action: utter_a")
        + ":::ordered_block id=main «\nsteps:\n  - id: b\n    action: utter_b\n:::\n",
    ),
    (
        "tab indentation",
        "skill.block.tab_indent",
        "error",
        block("steps:\n  - id: a\n\taction: utter_a «"),
    ),
    (
        "empty steps list",
        "skill.block.no_steps",
        "error",
        block("name: Nothing\nsteps: [] «"),
    ),
    (
        "empty block body",
        "skill.block.no_steps",
        "error",
        HEAD + ":::ordered_block id=main «\n:::\n",
    ),
    (
        "steps not a list",
        "skill.block.bad_shape",
        "error",
        block("steps: 3 «"),
    ),
    (
        "unknown block key",
        "skill.block.unknown_key",
        "warning",
        block("title: x «\nsteps:\n  - id: a\n    action: utter_a"),
    ),
    (
        "block id not a word",
        "skill.block.bad_id",
        "error",
        block(
            "steps:\n  - id: a\n    action: utter_a",
            fence=":::ordered_block id=a.b «",
            head=PLAIN,
        ),
    ),
    (
        "unknown fence attribute",
        "skill.block.unknown_attribute",
        "warning",
        block("steps:\n  - id: a\n    action: utter_a", fence=":::ordered_block id=main x=1 «"),
    ),
    (
        "block nothing enters",
        "skill.block.unreferenced",
        "warning",
        block("steps:\n  - id: a\n    action: utter_a")
        + ":::ordered_block id=lonely «\nsteps:\n  - id: b\n    action: utter_b\n:::\n",
    ),
    (
        "yaml syntax error in a block",
        "yaml.syntax",
        "error",
        block("steps:\n  - id: a\n    action: [utter_a «"),
    ),
    # -- steps ---------------------------------------------------------------------
    ("step without id", "skill.step.missing_id", "error", block("steps:\n  - action: utter_a «")),
    (
        "step id not a word",
        "skill.step.bad_id",
        "error",
        block("steps:\n  - id: two words «\n    action: utter_a"),
    ),
    (
        "duplicate step id",
        "skill.step.duplicate_id",
        "error",
        block("steps:\n  - id: a\n    action: utter_a\n  - id: a «\n    action: utter_b"),
    ),
    (
        "step with no kind",
        "skill.step.unknown_kind",
        "error",
        block("steps:\n  - id: a «\n    next: END"),
    ),
    (
        "step with two kinds",
        "skill.step.ambiguous_kind",
        "error",
        block("steps:\n  - id: a «\n    action: utter_a\n    collect: name"),
    ),
    (
        "key of another kind",
        "skill.step.unknown_key",
        "error",
        block("steps:\n  - id: a\n    action: utter_a\n    complete_when: session.n.x «"),
    ),
    (
        "key on END",
        "skill.step.unknown_key",
        "error",
        block("steps:\n  - id: a\n    action: utter_a\n  - id: END\n    next: a «"),
    ),
    (
        "utter instead of utterance on a collect",
        "skill.step.utter_instead_of_utterance",
        "warning",
        block("steps:\n  - id: a\n    collect: name\n    utter: utter_ask_name «"),
    ),
    (
        "utter instead of action",
        "skill.step.utter_instead_of_action",
        "warning",
        block("steps:\n  - id: a\n    utter: utter_hello «"),
    ),
    (
        "next to a missing step",
        "skill.step.unknown_next",
        "error",
        block("steps:\n  - id: a\n    action: utter_a\n    next: nowhere «"),
    ),
    (
        "branch to a missing step",
        "skill.step.unknown_next",
        "error",
        block(
            "steps:\n  - id: a\n    noop: true\n    next:\n"
            "      - if: session.n.x\n        then: a\n      - else: gone «"
        ),
    ),
    (
        "next is a number",
        "skill.step.bad_next",
        "error",
        block("steps:\n  - id: a\n    action: utter_a\n    next: 3 «"),
    ),
    (
        "branch without then",
        "skill.step.bad_next",
        "error",
        block("steps:\n  - id: a\n    noop: true\n    next:\n      - if: session.n.x «"),
    ),
    (
        "else before if",
        "skill.step.else_not_last",
        "error",
        block(
            "steps:\n  - id: a\n    noop: true\n    next:\n"
            "      - else: END «\n      - if: session.n.x\n        then: a"
        ),
    ),
    (
        "noop without next",
        "skill.step.noop_without_next",
        "error",
        block("steps:\n  - id: a «\n    noop: true"),
    ),
    (
        "next on a link",
        "skill.step.next_on_link",
        "warning",
        block("steps:\n  - id: a\n    link: other\n    next: END «"),
    ),
    (
        "action neither utter nor special",
        "skill.step.bad_action",
        "error",
        block("steps:\n  - id: a\n    action: say_hello «"),
    ),
    (
        "noop false",
        "skill.step.bad_value",
        "error",
        block("steps:\n  - id: a\n    noop: false «\n    next: END"),
    ),
    (
        "set_memory not a mapping",
        "skill.step.bad_value",
        "error",
        block("steps:\n  - id: a\n    set_memory: [x] «"),
    ),
    (
        "collect of a qualified name",
        "skill.step.bad_value",
        "error",
        block("steps:\n  - id: a\n    collect: session.n.x «"),
    ),
    (
        "step is a string",
        "skill.step.bad_shape",
        "error",
        block("steps:\n  - just a string «"),
    ),
    (
        "parameter that looks like a reference",
        "skill.step.bad_parameter_reference",
        "error",
        block("steps:\n  - id: a\n    execute_tool: t\n    parameters:\n      x: session.n «"),
    ),
    # -- conditions, reported under the condition parser's codes ---------------------
    (
        "step complete_when with a bare name",
        "condition.unknown_name",
        "error",
        block("steps:\n  - id: a\n    instructions: Talk.\n    complete_when: verified «"),
    ),
    (
        "branch condition syntax",
        "condition.syntax",
        "error",
        block(
            "steps:\n  - id: a\n    noop: true\n    next:\n"
            "      - if: session.n.x == «\n        then: END"
        ),
    ),
    (
        "step complete_when not a string",
        "skill.condition.not_a_string",
        "error",
        block("steps:\n  - id: a\n    instructions: Talk.\n    complete_when: true «"),
    ),
]

CONDITION_CASES = [
    (
        "if marker condition is a literal >",
        "condition.syntax",
        "---\nname: N\ndescription: D\n---\nif: > «\nFolded?\n",
    ),
    (
        "if marker with bare name",
        "condition.unknown_name",
        "---\nname: N\ndescription: D\n---\nif: verified «\nShown when verified.\n",
    ),
    (
        "skill requires empty",
        "condition.empty",
        '---\nname: N\ndescription: D\nrequires: "" «\n---\nProse.\n',
    ),
    (
        "complete_when condition bad reference",
        "condition.bad_reference",
        "---\nname: N\ndescription: D\ncomplete_when:\n  condition: session.x «\n---\nProse.\n",
    ),
    (
        "legacy complete_when string",
        "condition.unknown_name",
        "---\nname: N\ndescription: D\ncomplete_when: done «\n---\nProse.\n",
    ),
    (
        "tool constraint requires",
        "condition.unsupported",
        "---\nname: N\ndescription: D\ntool_constraints:\n  - t:\n"
        "      requires: session.n.x in 3 «\n---\nProse.\n",
    ),
    (
        "utter when",
        "condition.unknown_name",
        "---\nname: N\ndescription: D\nutter:\n  - utter_x:\n      when: flag «\n---\nProse.\n",
    ),
    (
        "yaml syntax error in frontmatter",
        "yaml.syntax",
        "---\nname: N\ndescription: [D «\n---\nProse.\n",
    ),
    (
        "yaml value PyYAML cannot construct",
        "yaml.syntax",
        "---\nname: N «\ndescription: D\ndate: 2001-13-45\n---\nProse.\n",
    ),
]


@pytest.mark.parametrize(
    ("code", "severity", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_block_diagnostic_code_and_line(code: str, severity: str, text: str) -> None:
    source, line = marked(text)
    _, diagnostics = parse_text(source)
    assert codes(diagnostics) == [(code, line)]
    assert diagnostics[0].severity == severity


@pytest.mark.parametrize(
    ("code", "text"), [c[1:] for c in CONDITION_CASES], ids=[c[0] for c in CONDITION_CASES]
)
def test_condition_and_yaml_codes(code: str, text: str) -> None:
    source, line = marked(text)
    _, diagnostics = parse_text(source)
    assert (code, line) in codes(diagnostics)
