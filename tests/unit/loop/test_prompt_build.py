"""build_system_prompt: section order, omitted sections and the situation branch."""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

import pytest
from prompt_kit import ALL_FRAMEWORK_TOOLS, BILLING, PARCEL, field, inputs, skill

from keel.events.fold import PendingConfirmation
from keel.knowledge.section import KnowledgeSection
from keel.loop.prompt import (
    DEFAULT_ROUTING_INTRO,
    ActiveSkill,
    KnowledgeAnswer,
    Routing,
    Situation,
    build_system_prompt,
)
from keel.memory import MemorySchema
from keel.project.config import AgentConfig, Prompts
from keel.skills import ActionStep, CollectStep, ExecuteToolStep, Step

PICK = PARCEL.blocks[0].steps[1]
ASK_ID = PARCEL.blocks[0].steps[0]
PENDING = PendingConfirmation(
    pause_id="p1", tool_name="reroute", tool_args={}, confirmation_ask=" Send it to the office? "
)


def _headings(prompt: str) -> list[str]:
    return re.findall(r"^##+ .*$", prompt, flags=re.MULTILINE)


def _before_the_clock(prompt: str) -> str:
    """The prompt up to its time section (which follows the situation)."""
    return prompt.split("\n\n## Now\n")[0]


def test_every_section_in_the_fixed_order() -> None:
    prompt = build_system_prompt(
        inputs(
            ActiveSkill(
                document=PARCEL, block_id="main", step=PICK, already_collected=("parcel_id",)
            ),
            channel="voice",
            offered_tools=ALL_FRAMEWORK_TOOLS,
            memory={"project.customer_name": "Ana", "redirect_parcel.parcel_id": "P1"},
            canned_replies=("Found it.",),
        )
    )
    assert prompt.startswith("You are Parcelo, a parcel assistant.\n\n")
    assert _headings(prompt) == [
        "## Rules",
        "## Skills",
        "## Channel",
        "## Framework tools",
        "## Out of scope",
        "## Active skill: Redirect Parcel (`redirect_parcel`)",
        "## Waiting for the user",
        "### Current step `pick` of the ordered block `main`",
        "### Memory:",
        "### Already collected (do not re-ask)",
        "## Project memory",
        "## Now",
        "## Acknowledgement",
        "## Already sent",
    ]


def test_conditional_sections_are_left_out_entirely() -> None:
    prompt = build_system_prompt(
        inputs(
            config=AgentConfig(persona="Plain."),
            skills=(),
            offered_tools=frozenset({"reroute"}),
            first_iteration=True,
        )
    )
    assert _headings(prompt) == ["## Channel", "## Routing", "## Now"]
    assert "\n\n\n" not in prompt
    assert not prompt.endswith("\n")


def test_ack_only_on_the_first_iteration() -> None:
    def prompt(first: bool) -> str:
        return build_system_prompt(
            inputs(channel="voice", offered_tools=ALL_FRAMEWORK_TOOLS, first_iteration=first)
        )

    assert "## Acknowledgement" in prompt(True)
    assert "## Acknowledgement" not in prompt(False)


def _mentioned(prompt: str) -> set[str]:
    return {tool for tool in ALL_FRAMEWORK_TOOLS if re.search(rf"\b{tool}\b", prompt)}


SITUATIONS = {
    "routing": Routing(eligible=(PARCEL, BILLING)),
    "knowledge": KnowledgeAnswer(sections=(KnowledgeSection(source="r.md", text="Fee 5."),)),
    "empty-knowledge": KnowledgeAnswer(),
    "active": ActiveSkill(
        document=PARCEL,
        block_id="main",
        step=ASK_ID,
        already_collected=("parcel_id",),
        pending_confirmation=PENDING,
        resume_offer=True,
    ),
}
SUBSETS = [
    frozenset(combo)
    for size in (0, 1, 2, 7, 8)
    for combo in itertools.combinations(sorted(ALL_FRAMEWORK_TOOLS), size)
]


@pytest.mark.parametrize("situation", SITUATIONS.values(), ids=SITUATIONS.keys())
def test_the_prompt_names_exactly_the_offered_framework_tools(situation: Situation) -> None:
    memory = {"redirect_parcel.parcel_id": "P1"}
    for offered in SUBSETS:
        prompt = build_system_prompt(inputs(situation, offered_tools=offered, memory=memory))
        assert _mentioned(prompt) == offered, sorted(offered)


def test_routing_catalogue_lists_eligible_skills_with_descriptions() -> None:
    prompt = build_system_prompt(
        inputs(Routing(eligible=(PARCEL,)), offered_tools=frozenset({"activate"}))
    )
    assert _before_the_clock(prompt).endswith(
        "## Routing\nNo skill is active. If the user's request matches a skill below, call "
        "activate with its id; otherwise reply briefly yourself.\n"
        "- redirect_parcel: Change where a parcel is delivered."
    )
    assert "- billing: Questions" not in prompt


def test_routing_intro_override_replaces_the_default_text() -> None:
    config = AgentConfig(persona="P.", prompts=Prompts(routing_no_active_skill="Pick one:\n"))
    prompt = build_system_prompt(
        inputs(Routing(eligible=(BILLING,)), config=config, offered_tools=ALL_FRAMEWORK_TOOLS)
    )
    assert (
        "## Routing\nPick one:\n- billing: Questions about invoices and payments.\n\n"
        "## Waiting for the user\n"
    ) in prompt
    assert DEFAULT_ROUTING_INTRO not in prompt


def test_routing_with_nothing_eligible() -> None:
    prompt = build_system_prompt(inputs(Routing()))
    assert _before_the_clock(prompt).endswith(
        f"## Routing\n{DEFAULT_ROUTING_INTRO}\nNo skill can be started right now."
    )


def test_knowledge_branch_lists_sections_with_sources_and_replaces_the_skill() -> None:
    answer = KnowledgeAnswer(
        sections=(
            KnowledgeSection(source="references/fees.md", text="Customs fee is 5 EUR.\n"),
            KnowledgeSection(source="skills/x/references/a.md", text="Abroad: 7 days."),
        )
    )
    prompt = build_system_prompt(inputs(answer, offered_tools=frozenset({"cannot_help"})))
    assert _before_the_clock(prompt).endswith(
        "## Answer from knowledge\nAnswer the user's question using only the retrieved sections "
        "below. If they do not contain the answer, say you do not know or call cannot_help.\n\n"
        "### [1] references/fees.md\nCustoms fee is 5 EUR.\n\n"
        "### [2] skills/x/references/a.md\nAbroad: 7 days."
    )
    assert "## Active skill" not in prompt
    assert "## Routing" not in prompt


def test_empty_knowledge_result_says_so() -> None:
    prompt = build_system_prompt(inputs(KnowledgeAnswer()))
    assert "The search found nothing relevant." in prompt
    assert "cannot_help" not in prompt


def _active(
    *,
    offered: frozenset[str] = ALL_FRAMEWORK_TOOLS,
    memory: Mapping[str, object] | None = None,
    block_id: str | None = None,
    step: Step | None = None,
    already_collected: tuple[str, ...] = (),
    pending_confirmation: PendingConfirmation | None = None,
    resume_offer: bool = False,
) -> str:
    active = ActiveSkill(
        document=PARCEL,
        block_id=block_id,
        step=step,
        already_collected=already_collected,
        pending_confirmation=pending_confirmation,
        resume_offer=resume_offer,
    )
    return build_system_prompt(inputs(active, offered_tools=offered, memory=memory))


def test_active_skill_shows_filtered_prose_and_no_catalogue() -> None:
    shown = _active(memory={"redirect_parcel.is_international": True})
    hidden = _active(memory={"redirect_parcel.is_international": False})
    assert "Mention the customs fee." in shown
    assert "Mention the customs fee." not in hidden
    assert "## Routing" not in shown
    assert "## Active skill: Redirect Parcel (`redirect_parcel`)\n\nHelp the user" in shown


def test_instruction_step_is_rendered_with_substitution() -> None:
    prompt = _active(block_id="main", step=PICK, memory={"redirect_parcel.parcel_id": "P9"})
    assert (
        "### Current step `pick` of the ordered block `main`\n"
        "Read back P9 and ask where to send it."
    ) in prompt


def test_collect_step_names_the_entry_and_set_fields() -> None:
    assert isinstance(ASK_ID, CollectStep)
    prompt = _active(block_id="main", step=ASK_ID)
    assert (
        "### Collecting now: `parcel_id`\nThe user has been asked for `parcel_id` "
        "(Tracking number). When their reply gives it, record it with set_fields."
    ) in prompt
    without = _active(block_id="main", step=ASK_ID, offered=frozenset({"cancel_skill"}))
    assert "set_fields" not in without
    assert "[settable]" not in without


def test_memory_section_lists_the_skills_own_entries_and_marks_settable_ones() -> None:
    prompt = _active(
        memory={
            "redirect_parcel.is_international": True,
            "billing.invoice_total": 12,
            "billing.card_last4": "4242",
            "project.customer_name": "Ana",
        }
    )
    assert (
        "### Memory:\n- parcel_id: (not set) [settable] — Tracking number\n- is_international: true"
    ) in prompt
    assert "invoice_total" not in prompt  # other skills' entries stay out, public or not
    assert "4242" not in prompt


def test_llm_settable_categorical_entry_lists_its_choices() -> None:
    document = skill(
        """
        ---
        name: Size
        description: D
        ---
        Ask the size.
        """,
        "sizer",
    )
    schema = MemorySchema.of(
        [field("sizer", "size", type="categorical", enum_values=("S", "M"), llm_settable=True)]
    )
    active = ActiveSkill(document=document)
    with_tool = inputs(active, schema=schema, offered_tools=frozenset({"set_fields"}))
    assert "### Memory:\n- size: (not set) [settable, one of: S, M]" in build_system_prompt(
        with_tool
    )
    plain = inputs(active, schema=schema, offered_tools=frozenset())
    assert "### Memory:\n- size: (not set)\n" in build_system_prompt(plain) + "\n"


def test_no_memory_section_for_a_skill_without_memory() -> None:
    prompt = build_system_prompt(inputs(ActiveSkill(document=BILLING), schema=MemorySchema()))
    assert "### Memory:" not in prompt


def test_already_collected_section() -> None:
    memory = {"redirect_parcel.parcel_id": "P1"}
    prompt = _active(already_collected=("parcel_id",), memory=memory)
    assert "### Already collected (do not re-ask)\n- parcel_id: P1" in prompt
    assert "### Already collected" not in _active(memory=memory)


def test_pending_confirmation_instructions() -> None:
    prompt = _active(pending_confirmation=PENDING)
    assert (
        "### Waiting for confirmation\nThe call to `reroute` is on hold until the user agrees. "
        'Question asked: "Send it to the office?"\nWhen the user answers, call '
        "resolve_tool_confirmation with confirmed true for yes or false for no. Do not call "
        "reroute again meanwhile."
    ) in prompt


def test_resume_offer() -> None:
    prompt = _active(resume_offer=True)
    assert _before_the_clock(prompt).endswith(
        "### Offer to resume\nRedirect Parcel was interrupted. Ask whether the user wants to "
        "continue it. If yes, call activate with target_id `redirect_parcel`. If not, call "
        "cancel_skill."
    )
    assert "### Offer to resume" not in _active()


def test_canned_reminder_comes_last() -> None:
    prompt = build_system_prompt(inputs(canned_replies=("Your parcel is on its way.",)))
    assert prompt.endswith(
        "## Already sent\nThese messages were just sent to the user word for word. Do not "
        "repeat or paraphrase them; carry on from there.\n> Your parcel is on its way."
    )
    assert "## Already sent" not in build_system_prompt(inputs())


@pytest.mark.parametrize(
    "step",
    [
        ActionStep(id="say", line=1, action="utter_done"),
        ExecuteToolStep(id="run", line=1, tool="t"),
    ],
)
def test_other_step_kinds_add_no_step_section(step: ActionStep | ExecuteToolStep) -> None:
    prompt = _active(block_id="main", step=step)
    assert "### Current step" not in prompt
    assert "### Collecting now" not in prompt
