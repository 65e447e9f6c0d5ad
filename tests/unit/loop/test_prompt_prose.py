"""Skill prose for the prompt: `if:` filtering and token substitution (spec §2.4)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from prompt_kit import PARCEL, SCHEMA, skill

from keel.conditions import MemoryReader, Reference, Unreadable
from keel.loop.prose import render_instructions, render_paragraphs, substitute
from keel.memory import reader_for
from keel.skills import InstructionsStep


def _reader(memory: Mapping[str, object], skill_id: str | None = "redirect_parcel") -> MemoryReader:
    return reader_for(memory, SCHEMA, skill_id)


def _sub(text: str, memory: Mapping[str, object], skill_id: str | None = "redirect_parcel") -> str:
    return substitute(text, _reader(memory, skill_id), SCHEMA, memory)


FLAGGED = skill(
    """
    ---
    name: Flagged
    description: D
    ---
    Always shown.

    if: session.redirect_parcel.is_international
    Only abroad.

    if: session.redirect_parcel.is_international == False
    Only at home.
    """
)


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        ({"redirect_parcel.is_international": True}, ("Always shown.", "Only abroad.")),
        ({"redirect_parcel.is_international": False}, ("Always shown.", "Only at home.")),
        # unset: `None` is falsy and `None == False` is false, so both marked ones hide
        ({}, ("Always shown.",)),
    ],
)
def test_if_marked_paragraphs_show_only_while_their_condition_holds(
    memory: Mapping[str, object], expected: tuple[str, ...]
) -> None:
    assert render_paragraphs(FLAGGED, _reader(memory), SCHEMA, memory) == expected


def test_a_condition_that_cannot_be_evaluated_hides_its_paragraph() -> None:
    def closed(reference: Reference) -> object:
        raise Unreadable(reference, "nope")

    memory = {"redirect_parcel.is_international": True}
    assert render_paragraphs(FLAGGED, closed, SCHEMA, memory) == ("Always shown.",)


def test_another_skills_private_entry_closes_the_condition() -> None:
    document = skill(
        """
        ---
        name: Peek
        description: D
        ---
        if: session.billing.card_last4
        Card on file.
        """
    )
    memory = {"billing.card_last4": "4242"}
    assert render_paragraphs(document, _reader(memory), SCHEMA, memory) == ()


def test_paragraph_tokens_are_rendered() -> None:
    memory = {"redirect_parcel.parcel_id": "P-7"}
    assert render_paragraphs(PARCEL, _reader(memory), SCHEMA, memory) == (
        "Help the user redirect parcel P-7 with reroute.",
        "Begin with the ordered block `main`.",
    )


@pytest.mark.parametrize(
    ("text", "memory", "expected"),
    [
        ("Id @memory.redirect_parcel.parcel_id!", {"redirect_parcel.parcel_id": "P1"}, "Id P1!"),
        ("Hi @memory.project.customer_name.", {"project.customer_name": "Ana"}, "Hi Ana."),
        ("Call @memory.project.phone", {"project.phone": "+49 123"}, "Call [set]"),
        (
            "Abroad: @memory.redirect_parcel.is_international",
            {"redirect_parcel.is_international": False},
            "Abroad: false",
        ),
        ("Total @memory.billing.invoice_total", {"billing.invoice_total": 12}, "Total 12"),
        ("Id @memory.redirect_parcel.parcel_id", {}, "Id @memory.redirect_parcel.parcel_id"),
        (
            "Card @memory.billing.card_last4",
            {"billing.card_last4": "4242"},
            "Card @memory.billing.card_last4",
        ),
        ("X @memory.project.nothing", {"project.nothing": "v"}, "X @memory.project.nothing"),
    ],
    ids=[
        "own",
        "trailing-dot",
        "pii",
        "bool",
        "public-other",
        "unset",
        "private-other",
        "undeclared",
    ],
)
def test_memory_tokens(text: str, memory: Mapping[str, object], expected: str) -> None:
    assert _sub(text, memory) == expected


def test_memory_value_comes_from_memory_and_access_from_the_reader() -> None:
    memory = {"billing.card_last4": "4242"}
    # billing reads its own private field
    assert _sub("@memory.billing.card_last4", memory, "billing") == "4242"


def test_lists_render_like_the_memory_section() -> None:
    schema_memory = {"redirect_parcel.parcel_id": ["a", "b"]}
    assert _sub("@memory.redirect_parcel.parcel_id", schema_memory) == '["a", "b"]'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use @tool.reroute now.", "Use reroute now."),
        ("Start @block.main.", "Start the ordered block `main`."),
        ("Hand over to @skill.billing", "Hand over to the skill `billing`"),
        (
            "Ids may hold dashes: @block.pick-one",
            "Ids may hold dashes: the ordered block `pick-one`",
        ),
    ],
)
def test_jump_and_tool_tokens(text: str, expected: str) -> None:
    assert _sub(text, {}) == expected


@pytest.mark.parametrize(
    "text",
    [
        "@memory.project",  # too few segments
        "@memory.project.a.b",  # too many
        "@block.a.b",
        "mail me at x@tool.example",  # preceded by a word character
        "@tools.reroute",  # not a token kind
        "no tokens at all",
    ],
)
def test_malformed_or_foreign_text_is_left_as_written(text: str) -> None:
    assert _sub(text, {"project.customer_name": "Ana"}) == text


def test_step_instructions_get_the_same_substitution_and_filter_if_lines() -> None:
    memory = {"redirect_parcel.parcel_id": "P1", "project.phone": "1"}
    text = (
        "Read back @memory.redirect_parcel.parcel_id.\n"
        "if: session.project.phone\n"
        "Call @memory.project.phone"
    )
    assert render_instructions(text, _reader(memory), SCHEMA, memory) == (
        "Read back P1.\nCall [set]"
    )
    assert (
        render_instructions(text, _reader({}), SCHEMA, {})
        == "Read back @memory.redirect_parcel.parcel_id."
    )


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        (
            {"redirect_parcel.is_international": True},
            "Ask for the parcel.\nAsk for the customs form.\nSay goodbye.",
        ),
        ({"redirect_parcel.is_international": False}, "Ask for the parcel.\nSay goodbye."),
        ({}, "Ask for the parcel.\nSay goodbye."),
    ],
)
def test_if_lines_in_a_step_show_their_lines_only_while_they_hold(
    memory: Mapping[str, object], expected: str
) -> None:
    document = skill(
        """
        ---
        name: Steps
        description: D
        ---
        :::ordered_block id=b
        steps:
          - id: s
            instructions: |
              Ask for the parcel.
              if: session.redirect_parcel.is_international
                Ask for the customs form.
              Say goodbye.
        :::
        """
    )
    step = document.blocks[0].steps[0]
    assert isinstance(step, InstructionsStep)
    assert render_instructions(step, _reader(memory), SCHEMA, memory) == expected


def test_block_and_skill_tokens_in_backticks_have_no_nested_code_span() -> None:
    text = "Start `@block.verify` then `@skill.billing`; call `@tool.lookup`."
    assert _sub(text, {}) == (
        "Start the ordered block `verify` then the skill `billing`; call `lookup`."
    )


def test_a_skill_that_is_not_available_is_not_named() -> None:
    text = "Hand over to @skill.billing or @skill.lounge."
    rendered = substitute(text, _reader({}), SCHEMA, {}, unavailable=frozenset({"lounge"}))
    assert rendered == "Hand over to the skill `billing` or a skill that is not available now."
    instructions = render_instructions(
        "Offer @skill.lounge.", _reader({}), SCHEMA, {}, unavailable=frozenset({"lounge"})
    )
    assert instructions == "Offer a skill that is not available now."
