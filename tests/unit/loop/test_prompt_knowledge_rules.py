"""`references.instructions` (how to answer from the reference documents) is in the prompt
whenever `search_knowledge` is offered, and in the answer-from-knowledge section after a
search, once."""

from __future__ import annotations

from dataclasses import replace

from prompt_kit import CONFIG, inputs

from keel.knowledge.section import KnowledgeSection
from keel.loop.prompt import KnowledgeAnswer, Routing, build_system_prompt
from keel.loop.prompt_sections import KNOWLEDGE_RULES_HEADING
from keel.project.config import ReferencesConfig

HOW = "Answer in two sentences and name the document."
WITH_HOW = replace(CONFIG, references=ReferencesConfig(instructions=HOW + "\n"))
FOUND = KnowledgeAnswer(sections=(KnowledgeSection(source="fares.md", text="Two euros."),))


def test_instructions_follow_the_framework_tools_while_search_is_offered() -> None:
    prompt = build_system_prompt(
        inputs(Routing(), config=WITH_HOW, offered_tools=frozenset({"search_knowledge"}))
    )
    assert f"{KNOWLEDGE_RULES_HEADING}\n{HOW}" in prompt
    assert prompt.index("## Framework tools") < prompt.index(KNOWLEDGE_RULES_HEADING)


def test_no_instructions_without_the_search_tool() -> None:
    prompt = build_system_prompt(inputs(Routing(), config=WITH_HOW, offered_tools=frozenset()))
    assert HOW not in prompt


def test_the_answer_call_after_a_search_carries_them_once() -> None:
    offered = frozenset({"search_knowledge", "cannot_help"})
    prompt = build_system_prompt(inputs(FOUND, config=WITH_HOW, offered_tools=offered))
    assert prompt.count(HOW) == 1
    assert KNOWLEDGE_RULES_HEADING not in prompt
    answer = prompt[prompt.index("## Answer from knowledge") :]
    assert answer.index(HOW) < answer.index("### [1] fares.md")


def test_without_instructions_the_prompt_is_unchanged() -> None:
    offered = frozenset({"search_knowledge"})
    plain = build_system_prompt(inputs(FOUND, config=CONFIG, offered_tools=offered))
    assert KNOWLEDGE_RULES_HEADING not in plain
    assert "### [1] fares.md" in plain
