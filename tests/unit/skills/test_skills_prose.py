"""Prose details: if: scoping, tokens, line endings, partial documents, step aliases."""

from __future__ import annotations

from skilltext import codes, parse

from keel.conditions import parse_condition
from keel.skills import ActionStep, CompleteWhen, Paragraph, Token, parse_skill


def test_if_scopes_only_the_paragraph_that_follows() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        Always one.
        if: session.demo.vip
        Only for VIPs,
        over two lines.

        Always two.
        """
    )
    assert diagnostics == []
    assert document is not None
    vip = parse_condition("session.demo.vip")
    assert document.paragraphs == (
        Paragraph(text="Always one.", line=5),
        Paragraph(text="Only for VIPs,\nover two lines.", line=7, condition=vip),
        Paragraph(text="Always two.", line=10),
    )


def test_if_condition_error_names_the_file_column() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        if:   session.demo.x ==
        Shown?
        """
    )
    (problem,) = diagnostics
    assert (problem.code, problem.line) == ("condition.syntax", 5)
    # the condition starts at file column 7; the missing operand is just past the end
    assert "column 24" in problem.message


def test_token_edges() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        Finish with @skill.farewell. Mail help@memory.example.com or see @blocks of text.
        Hi @memory.project.name, then @tool.lookup.
        """
    )
    assert diagnostics == []
    assert document is not None
    assert document.tokens == (
        Token(kind="skill", target="farewell", line=5),
        Token(kind="memory", target="project.name", line=6),
        Token(kind="tool", target="lookup", line=6),
    )


def test_crlf_and_bom_keep_real_lines() -> None:
    text = "\ufeff---\r\nname: N\r\ndescription: D\r\n---\r\n\r\nUse @block.nope.\r\n"
    _, diagnostics = parse_skill("demo", text, "skills/demo/skill.md")
    assert codes(diagnostics) == [("skill.prose.unknown_block", 6)]


def test_missing_name_still_gives_a_document() -> None:
    document, diagnostics = parse(
        """
        ---
        description: D
        ---
        Prose.
        """
    )
    assert codes(diagnostics) == [("skill.frontmatter.missing_name", 2)]
    assert document is not None and document.name == "" and document.description == "D"


def test_unreadable_frontmatter_gives_no_document() -> None:
    document, diagnostics = parse("no frontmatter at all\n")
    assert document is None
    assert codes(diagnostics) == [("skill.markdown.invalid_frontmatter_delimiter", 1)]


def test_diagnostics_come_sorted_by_line() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        disabled: maybe
        ---
        Use @memory.project here.
        :::ordered_block id=main
        steps:
          - id: a
            action: nope
        :::
        """
    )
    lines = [d.line or 0 for d in diagnostics]
    assert lines == sorted(lines) and len(lines) >= 3


def test_utter_on_a_collect_becomes_an_action_step() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=main
        steps:
          - id: ask
            collect: name
            utter: utter_ask_name
        :::
        """
    )
    assert codes(diagnostics) == [("skill.step.utter_instead_of_utterance", 9)]
    assert diagnostics[0].severity == "warning"
    assert document is not None
    assert document.blocks[0].steps == (ActionStep(id="ask", line=7, action="utter_ask_name"),)


def test_call_of_a_block_counts_as_entering_it() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=main
        steps:
          - id: go
            call: helper
        :::
        :::ordered_block id=helper
        steps:
          - id: say
            action: utter_help
        :::
        """
    )
    assert diagnostics == []


def test_legacy_complete_when_string_means_condition() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        complete_when: session.demo.done
        ---
        Prose.
        """
    )
    assert diagnostics == []
    assert document is not None
    assert document.complete_when == CompleteWhen(
        condition=parse_condition("session.demo.done"), line=4
    )


def test_token_naming_an_unclosed_block_is_not_reported_twice() -> None:
    _, diagnostics = parse(
        """
        ---
        name: N
        description: D
        ---
        Run @block.main.
        :::ordered_block id=main
        steps: []
        """
    )
    assert codes(diagnostics) == [("skill.block.unclosed_fence", 6)]
