"""`if:` lines inside an ordered-block step's `instructions:` and session references in prose."""

from __future__ import annotations

from skilltext import codes, parse

from keel.conditions import parse_condition
from keel.skills import InstructionsStep
from keel.skills.steps import InstructionPart

CLAIM = """
---
name: File a claim
description: File an insurance claim.
---
:::ordered_block id=claim
steps:
  - id: details
    instructions: |
      Ask what happened.
      if: session.file_claim.policy_name == "Car"
        Ask for the licence plate.
        Ask whether anyone was hurt.
      if: session.file_claim.policy_name == "Home"
        Ask for the address of the home.
      Then thank the user.
    complete_when: "session.file_claim.details"
:::
"""


def _step(text: str) -> InstructionsStep:
    document, diagnostics = parse(text, "file_claim")
    assert [d for d in diagnostics if d.severity == "error"] == [], diagnostics
    assert document is not None
    step = document.blocks[0].steps[0]
    assert isinstance(step, InstructionsStep)
    return step


def test_if_lines_in_step_instructions_are_conditional_parts() -> None:
    document, diagnostics = parse(CLAIM, "file_claim")
    assert diagnostics == []
    assert document is not None
    step = document.blocks[0].steps[0]
    assert isinstance(step, InstructionsStep)
    car = parse_condition('session.file_claim.policy_name == "Car"')
    home = parse_condition('session.file_claim.policy_name == "Home"')
    assert step.parts == (
        InstructionPart(text="Ask what happened.", line=9),
        InstructionPart(
            text="Ask for the licence plate.\nAsk whether anyone was hurt.",
            line=11,
            condition=car,
        ),
        InstructionPart(text="Ask for the address of the home.", line=14, condition=home),
        InstructionPart(text="Then thank the user.", line=15),
    )


def test_if_scope_ends_at_a_blank_line_when_not_indented() -> None:
    step = _step(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: |
              if: session.file_claim.vip
              Greet them by name.

              Ask the question.
        :::
        """
    )
    assert [(p.text, p.condition is not None) for p in step.parts] == [
        ("Greet them by name.", True),
        ("\nAsk the question.", False),
    ]


def test_instructions_without_if_lines_have_no_parts() -> None:
    step = _step(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: Ask the question.
        :::
        """
    )
    assert step.parts == ()
    assert step.instructions == "Ask the question."


def test_every_bare_reference_is_reported_on_its_own_line() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: |
              Say session.demo.name first.
              Then say session.demo.name again.
              And session.demo.name a third time.
        :::
        """
    )
    assert codes(diagnostics) == [
        ("skill.prose.bare_session_reference", 9),
        ("skill.prose.bare_session_reference", 10),
        ("skill.prose.bare_session_reference", 11),
    ]


def test_a_bad_if_condition_in_instructions_is_reported_at_its_line() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: |
              Ask.
              if: session.demo.x ==
                Only then.
        :::
        """
    )
    assert [(d.code, d.line, d.severity) for d in diagnostics] == [
        ("condition.syntax", 10, "error")
    ]


def test_else_in_instructions_is_a_warning() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: |
              if: session.demo.x
                One.
              else:
                Two.
        :::
        """
    )
    assert [(d.code, d.line, d.severity) for d in diagnostics] == [
        ("skill.step.else_in_instructions", 11, "warning")
    ]


def test_session_reference_in_backticks_is_a_warning_with_the_fix() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        If `session.project.username` is empty, ask for it.
        """
    )
    assert [(d.code, d.line, d.severity) for d in diagnostics] == [
        ("skill.prose.quoted_session_reference", 5, "warning")
    ]
    assert "@memory.project.username" in diagnostics[0].message


def test_bare_session_reference_outside_backticks_stays_an_error() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        If session.project.username is empty, ask for it.
        """
    )
    assert [(d.code, d.severity) for d in diagnostics] == [
        ("skill.prose.bare_session_reference", "error")
    ]
