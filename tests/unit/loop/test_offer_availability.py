"""eligible_skills / unavailable_skills: one evaluation of every `requires` per state."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from keel.events.base import StackFrame
from keel.events.fold import ConversationState
from keel.loop.offer import eligible_skills, unavailable_skills
from keel.testing.harness import load_definition

AGENT = Path(__file__).parent / "hardening_agent"


def _ids(skills: tuple[object, ...]) -> list[str]:
    return sorted(s.skill_id for s in skills)  # type: ignore[attr-defined]


def test_each_state_gets_its_own_answer_whatever_was_asked_before() -> None:
    definition = load_definition(AGENT)
    plain = ConversationState()
    gold = ConversationState(memory=MappingProxyType({"project.plan": "gold"}))
    # Asked in turn, as a model call asks (tools, then prompt), and back and forth.
    assert _ids(eligible_skills(definition, plain)) == ["counter", "errand"]
    assert unavailable_skills(definition, plain) == frozenset({"lounge"})
    assert _ids(eligible_skills(definition, gold)) == ["counter", "errand", "lounge"]
    assert unavailable_skills(definition, gold) == frozenset()
    assert unavailable_skills(definition, plain) == frozenset({"lounge"})
    assert _ids(eligible_skills(definition, plain)) == ["counter", "errand"]


def test_an_equal_state_built_anew_is_evaluated_anew() -> None:
    definition = load_definition(AGENT)
    first = ConversationState(memory=MappingProxyType({"project.plan": "gold"}))
    again = ConversationState(memory=MappingProxyType({"project.plan": "basic"}))
    assert "lounge" in _ids(eligible_skills(definition, first))
    assert "lounge" not in _ids(eligible_skills(definition, again))
    assert unavailable_skills(definition, again) == frozenset({"lounge"})


def test_the_active_skill_is_neither_eligible_nor_unavailable() -> None:
    definition = load_definition(AGENT)
    assert _ids(eligible_skills(definition, ConversationState())) == ["counter", "errand"]
    frame = StackFrame(frame_id="f1", skill_id="lounge", type="skill")
    in_lounge = ConversationState(stack=(frame,))
    assert _ids(eligible_skills(definition, in_lounge)) == ["counter", "errand"]
    assert unavailable_skills(definition, in_lounge) == frozenset()
    frame = StackFrame(frame_id="f2", skill_id="counter", type="skill")
    assert _ids(eligible_skills(definition, ConversationState(stack=(frame,)))) == ["errand"]
