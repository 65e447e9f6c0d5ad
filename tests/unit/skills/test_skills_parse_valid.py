"""A rich, valid hybrid skill (prose + a block using every step kind) parses into values."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from skilltext import FILE, parse

from keel.conditions import Reference, parse_condition
from keel.skills import (
    ActionStep,
    Branch,
    CallStep,
    CollectStep,
    CompleteWhen,
    Confirmation,
    EndStep,
    ExecuteToolStep,
    ImportTool,
    InstructionsStep,
    LinkStep,
    NoopStep,
    Paragraph,
    Routing,
    SetMemoryStep,
    SkillDocument,
    Token,
    ToolConstraint,
    UtterTrigger,
)

RICH = """\
---
name: Redirect Parcel
description: >
  Change where a parcel is delivered.
  Activate for "send it to my office".
requires: "session.project.customer_verified"
complete_when:
  condition: "session.redirect_parcel.redirect_done"
  criteria:
    - The new address was read back to the user
import_tools:
  - lookup_parcel
  - mcp/depot:reroute
tool_constraints:
  - reroute:
      requires: "session.redirect_parcel.parcel_id and session.redirect_parcel.new_address"
      requires_confirmation:
        enabled: true
        utter_for_confirmation: utter_confirm_reroute
        utter_on_user_denial: utter_reroute_dropped
      on_success: utter_reroute_done
      on_failure: utter_reroute_failed
  - lookup_parcel:
utter:
  - utter_fee_notice:
      when: session.redirect_parcel.is_international == True
  - utter_redirect_intro:
      on: activate
disabled: false
routing:
  hidden: true
tier: reasoning
max_turns: 6
examples:
  - send it to my office
  - deliver to a neighbour
---
# Redirect a parcel

Help @memory.project.first_name move a parcel. First run @block.pick_parcel.
Use @tool.lookup_parcel when unsure; @skill.verify_identity can help.

if: session.redirect_parcel.is_international == True
Mention that international redirects cost extra.
  if: this indented line is plain prose

:::ordered_block id=pick_parcel
name: Pick a parcel
description: Find the parcel to redirect
steps:
  - id: fetch
    execute_tool: lookup_parcel
    parameters:
      customer: session.project.customer_id
      limit: 5
      tags: [a, b]
  - id: route
    noop: true
    next:
      - if: session.redirect_parcel.parcel_count == 0
        then: none_found
      - if: session.redirect_parcel.parcel_count == 1
        then: remember
      - else: pick
  - id: none_found
    action: utter_no_parcels
    next: END
  - id: remember
    set_memory:
      single_parcel: true
      project.channel: parcel
    next: address
  - id: pick
    instructions: |
      Read the parcels back and ask which one.
      Refer to @memory.redirect_parcel.parcels for the list.
    complete_when: "session.redirect_parcel.parcel_id"
  - id: address
    collect: new_address
    utterance: utter_ask_new_address
    complete_when: session.redirect_parcel.address_confirmed
  - id: verify
    call: verify_identity
    next: wait
  - id: wait
    action: action_listen
  - id: bye
    action: hangup
  - id: done
    link: farewell
  - id: END
:::
"""


@pytest.fixture(scope="module")
def document() -> SkillDocument:
    doc, diagnostics = parse(RICH, skill_id="redirect_parcel")
    assert diagnostics == []
    assert doc is not None
    return doc


def cond(source: str) -> object:
    return parse_condition(source)


def test_frontmatter_values(document: SkillDocument) -> None:
    assert document.skill_id == "redirect_parcel"
    assert document.file == FILE
    assert document.name == "Redirect Parcel"
    assert document.description == (
        'Change where a parcel is delivered. Activate for "send it to my office".'
    )
    assert document.requires == cond("session.project.customer_verified")
    assert document.complete_when == CompleteWhen(
        condition=parse_condition("session.redirect_parcel.redirect_done"),
        criteria=("The new address was read back to the user",),
        line=7,
    )
    assert document.import_tools == (
        ImportTool(name="lookup_parcel", line=12),
        ImportTool(name="reroute", line=13, mcp_server="depot", mcp_tool="reroute"),
    )
    assert not document.import_tools[0].is_mcp and document.import_tools[1].is_mcp
    assert document.disabled is False
    assert document.routing == Routing(hidden=True)
    assert document.routable is False
    assert document.tier == "reasoning"
    assert document.max_turns == 6
    assert document.examples == ("send it to my office", "deliver to a neighbour")
    assert document.line_of("tool_constraints") == 14
    assert document.line_of("absent") == 1


def test_tool_constraints_and_utter(document: SkillDocument) -> None:
    assert document.tool_constraints == (
        ToolConstraint(
            tool="reroute",
            line=15,
            requires=parse_condition(
                "session.redirect_parcel.parcel_id and session.redirect_parcel.new_address"
            ),
            requires_confirmation=Confirmation(
                enabled=True,
                utter_for_confirmation="utter_confirm_reroute",
                utter_on_user_denial="utter_reroute_dropped",
                line=17,
            ),
            on_success="utter_reroute_done",
            on_failure="utter_reroute_failed",
        ),
        ToolConstraint(tool="lookup_parcel", line=23),
    )
    assert document.utter == (
        UtterTrigger(
            response="utter_fee_notice",
            when=parse_condition("session.redirect_parcel.is_international == True"),
            line=25,
        ),
        UtterTrigger(response="utter_redirect_intro", on="activate", line=27),
    )


def test_prose(document: SkillDocument) -> None:
    assert document.paragraphs == (
        Paragraph(text="# Redirect a parcel", line=38),
        Paragraph(
            text="Help @memory.project.first_name move a parcel. First run @block.pick_parcel.\n"
            "Use @tool.lookup_parcel when unsure; @skill.verify_identity can help.",
            line=40,
        ),
        Paragraph(
            text="Mention that international redirects cost extra.\n"
            "  if: this indented line is plain prose",
            line=44,
            condition=parse_condition("session.redirect_parcel.is_international == True"),
        ),
    )
    assert document.has_prose and not document.is_block_only


def test_tokens_from_prose_and_instructions(document: SkillDocument) -> None:
    assert document.tokens == (
        Token(kind="memory", target="project.first_name", line=40),
        Token(kind="block", target="pick_parcel", line=40),
        Token(kind="tool", target="lookup_parcel", line=41),
        Token(kind="skill", target="verify_identity", line=41),
        Token(kind="memory", target="redirect_parcel.parcels", line=76),
    )
    assert document.tokens[0].text == "@memory.project.first_name"


def test_block_and_every_step_kind(document: SkillDocument) -> None:
    (block,) = document.blocks
    assert (block.block_id, block.line, block.name, block.description) == (
        "pick_parcel",
        47,
        "Pick a parcel",
        "Find the parcel to redirect",
    )
    assert block.flow_id("redirect_parcel") == "redirect_parcel__pick_parcel"
    assert document.block("pick_parcel") is block and document.block("nope") is None
    assert block.steps == (
        ExecuteToolStep(
            id="fetch",
            line=51,
            tool="lookup_parcel",
            parameters=MappingProxyType(
                {
                    "customer": "session.project.customer_id",
                    "limit": 5,
                    "tags": ("a", "b"),
                }
            ),
        ),
        NoopStep(
            id="route",
            line=57,
            next=(
                Branch(
                    condition=parse_condition("session.redirect_parcel.parcel_count == 0"),
                    target="none_found",
                    line=60,
                ),
                Branch(
                    condition=parse_condition("session.redirect_parcel.parcel_count == 1"),
                    target="remember",
                    line=62,
                ),
                Branch(condition=None, target="pick", line=64),
            ),
        ),
        ActionStep(id="none_found", line=65, next="END", action="utter_no_parcels"),
        SetMemoryStep(
            id="remember",
            line=68,
            next="address",
            values=MappingProxyType({"single_parcel": True, "project.channel": "parcel"}),
        ),
        InstructionsStep(
            id="pick",
            line=73,
            instructions="Read the parcels back and ask which one.\n"
            "Refer to @memory.redirect_parcel.parcels for the list.",
            complete_when=parse_condition("session.redirect_parcel.parcel_id"),
        ),
        CollectStep(
            id="address",
            line=78,
            entry="new_address",
            utterance="utter_ask_new_address",
            complete_when=parse_condition("session.redirect_parcel.address_confirmed"),
        ),
        CallStep(id="verify", line=82, next="wait", target="verify_identity"),
        ActionStep(id="wait", line=85, action="action_listen"),
        ActionStep(id="bye", line=87, action="hangup"),
        LinkStep(id="done", line=89, target="farewell"),
        EndStep(id="END", line=91),
    )
    fetch = block.step("fetch")
    assert isinstance(fetch, ExecuteToolStep)
    assert dict(fetch.references) == {
        "customer": Reference(namespace="project", entry="customer_id")
    }
    route = block.step("route")
    assert isinstance(route, NoopStep) and isinstance(route.next, tuple)
    assert route.next[-1].is_else and not route.next[0].is_else
