"""The bundled default skills and engine responses."""

from __future__ import annotations

from keel.skills import (
    ActionStep,
    NoopStep,
    default_responses_file,
    load_default_skills,
    read_default_responses,
)
from keel.source.yaml import load_yaml


def test_default_skills_parse_cleanly_and_are_engine_managed() -> None:
    documents = {d.skill_id: d for d in load_default_skills()}
    assert set(documents) == {"default_completed", "default_session_start"}
    for document in documents.values():
        assert document.routing.engine_managed
        assert not document.routable
        assert document.is_block_only
        assert document.file == f"keel/skills/defaults/{document.skill_id}/skill.md"


def test_session_start_is_a_silent_noop_that_ends() -> None:
    (document,) = [d for d in load_default_skills() if d.skill_id == "default_session_start"]
    (block,) = document.blocks
    assert block.block_id == "main"
    assert block.flow_id(document.skill_id) == "default_session_start__main"
    (step,) = block.steps
    assert isinstance(step, NoopStep) and step.next == "END"


def test_completed_asks_whether_to_continue() -> None:
    (document,) = [d for d in load_default_skills() if d.skill_id == "default_completed"]
    (block,) = document.blocks
    assert block.block_id == "main"
    assert block.steps == (
        ActionStep(id="ask_continue", line=9, action="utter_ask_wants_to_continue"),
    )


def test_bundled_responses() -> None:
    assert default_responses_file().name == "responses.yml"
    data, diagnostics = load_yaml(read_default_responses(), "responses.yml")
    assert diagnostics == []
    responses = data["responses"]
    assert set(responses) == {
        "utter_ask_wants_to_continue",
        "utter_set_memory_button_skipped",
        "utter_can_not_help",
        "utter_offer_resume",
        "utter_ask_tool_confirmation",
        "utter_budget_exhausted",
        "utter_repeated_tool_call",
        "utter_internal_error",
        "utter_needs_model",
        "utter_skill_needs_model",
        "utter_offline_can_do",
        "utter_offline_limits",
        "utter_offline_ask_next",
        "utter_offline_goodbye",
        "utter_offline_welcome",
        "utter_offline_stopped",
        "utter_offline_clarify",
        "utter_offline_not_understood",
    }
    for variants in responses.values():
        assert all(v["text"].strip() for v in variants)
    (resume,) = responses["utter_offer_resume"]
    assert "{skill}" in resume["text"]
    assert [b["title"] for b in resume["buttons"]] == ["Yes", "No"]
    (confirm,) = responses["utter_ask_tool_confirmation"]
    assert "{tool}" in confirm["text"] and "{arguments}" in confirm["text"]


def test_every_response_a_default_skill_utters_is_bundled() -> None:
    data, _ = load_yaml(read_default_responses(), "responses.yml")
    used = {
        step.action
        for document in load_default_skills()
        for block in document.blocks
        for step in block.steps
        if isinstance(step, ActionStep) and step.action.startswith("utter_")
    }
    assert used and used <= set(data["responses"])
