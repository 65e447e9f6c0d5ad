"""OrderedBlock helpers, the step-kind registry and is_deterministic."""

from __future__ import annotations

from skilltext import parse

from keel.skills import (
    END,
    END_ID,
    STEP_KINDS,
    ActionStep,
    CallStep,
    CollectStep,
    EndStep,
    ExecuteToolStep,
    InstructionsStep,
    LinkStep,
    NoopStep,
    OrderedBlock,
    SetMemoryStep,
    Step,
    is_deterministic,
)

BLOCK_ONLY = """\
---
name: Fully controlled
description: Block only.
---
:::ordered_block id=main
steps:
  - id: one
    action: utter_one
  - id: two
    noop: true
    next: END
  - id: three
    action: utter_three
:::
"""


def block_of(text: str) -> OrderedBlock:
    document, diagnostics = parse(text)
    assert document is not None, diagnostics
    return document.blocks[0]


def test_step_lookup_first_and_following() -> None:
    block = block_of(BLOCK_ONLY)
    assert block.step_ids == ("one", "two", "three")
    assert block.first_step.id == "one"
    step_two = block.step("two")
    assert isinstance(step_two, NoopStep)
    assert block.following("one") is step_two
    assert block.following("three") is END
    assert block.following("unknown") is END
    assert block.following(END_ID) is END
    assert block.step("missing") is None
    assert block.step(END_ID) is END


def test_declared_end_step_is_returned_with_its_line() -> None:
    block = block_of(
        """\
        ---
        name: N
        description: D
        ---
        :::ordered_block id=main
        steps:
          - id: one
            action: utter_one
          - id: END
          - id: after
            action: utter_after
        :::
        """
    )
    declared = block.step(END_ID)
    assert isinstance(declared, EndStep) and declared.line == 9
    assert block.following("one") is declared
    assert block.following(END_ID) is END


def test_empty_block_starts_at_end() -> None:
    assert OrderedBlock(block_id="b", line=1, steps=()).first_step is END


def test_registry_maps_each_discriminating_key_to_its_class() -> None:
    assert dict(STEP_KINDS) == {
        "instructions": InstructionsStep,
        "collect": CollectStep,
        "action": ActionStep,
        "execute_tool": ExecuteToolStep,
        "noop": NoopStep,
        "set_memory": SetMemoryStep,
        "call": CallStep,
        "link": LinkStep,
    }
    for key, cls in STEP_KINDS.items():
        assert cls.KEY == key


def test_is_deterministic() -> None:
    deterministic: list[Step] = [
        ActionStep(id="a", line=1, action="utter_x"),
        ExecuteToolStep(id="b", line=1, tool="t"),
        NoopStep(id="c", line=1, next="END"),
        SetMemoryStep(id="d", line=1, values={}),
        CallStep(id="e", line=1, target="x"),
        LinkStep(id="f", line=1, target="x"),
        END,
    ]
    needs_user_or_model: list[Step] = [
        InstructionsStep(id="g", line=1, instructions="talk"),
        CollectStep(id="h", line=1, entry="x"),
    ]
    assert all(is_deterministic(s) for s in deterministic)
    assert not any(is_deterministic(s) for s in needs_user_or_model)


def test_block_only_skill_shape() -> None:
    document, _ = parse(BLOCK_ONLY)
    assert document is not None
    assert document.is_block_only and not document.has_prose
    assert document.paragraphs == ()


def test_heading_alone_is_not_prose() -> None:
    document, diagnostics = parse(BLOCK_ONLY.replace("---\n:::", "---\n# Title\n\n:::"))
    assert document is not None and diagnostics == []
    assert document.is_block_only
