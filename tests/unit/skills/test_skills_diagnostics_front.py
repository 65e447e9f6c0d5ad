"""One case per frontmatter / prose diagnostic: the code and the exact line (marked «).

Each case is written to produce exactly one diagnostic, so a stray extra finding fails too.
"""

from __future__ import annotations

import pytest
from skilltext import FILE, codes, marked, parse_text

# (case id, code, severity, text with the expected line marked by a trailing " «")
CASES = [
    (
        "no opening delimiter",
        "skill.markdown.invalid_frontmatter_delimiter",
        "error",
        """
        name: Demo «
        description: D
        ---
        """,
    ),
    (
        "no closing delimiter",
        "skill.markdown.invalid_frontmatter_delimiter",
        "error",
        """
        --- «
        name: Demo
        description: D
        """,
    ),
    (
        "frontmatter is a list",
        "skill.frontmatter.not_a_mapping",
        "error",
        """
        ---
        - name «
        ---
        """,
    ),
    (
        "frontmatter is empty",
        "skill.frontmatter.not_a_mapping",
        "error",
        """
        ---
        --- «
        """,
    ),
    (
        "missing name",
        "skill.frontmatter.missing_name",
        "error",
        """
        ---
        description: D «
        ---
        Prose.
        """,
    ),
    (
        "empty description",
        "skill.frontmatter.missing_description",
        "error",
        """
        ---
        name: N
        description: "" «
        ---
        Prose.
        """,
    ),
    (
        "requires in map form",
        "skill.frontmatter.requires_not_string",
        "error",
        """
        ---
        name: N
        description: D
        requires: «
          session.project.verified:
            exists: true
        ---
        Prose.
        """,
    ),
    (
        "disabled maybe",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        disabled: "maybe" «
        ---
        Prose.
        """,
    ),
    (
        "max_turns zero",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        max_turns: 0 «
        ---
        Prose.
        """,
    ),
    (
        "max_turns boolean",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        max_turns: true «
        ---
        Prose.
        """,
    ),
    (
        "name not a string",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: 12 «
        description: D
        ---
        Prose.
        """,
    ),
    (
        "tier not a string",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        tier: [a] «
        ---
        Prose.
        """,
    ),
    (
        "examples item not a string",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        examples:
          - fine
          - {a: 1} «
        ---
        Prose.
        """,
    ),
    (
        "routing flag not a bool",
        "skill.frontmatter.bad_type",
        "error",
        """
        ---
        name: N
        description: D
        routing:
          engine_managed: "yes" «
        ---
        Prose.
        """,
    ),
    (
        "unknown frontmatter key",
        "skill.frontmatter.unknown_key",
        "warning",
        """
        ---
        name: N
        description: D
        requirez: "session.project.x" «
        ---
        Prose.
        """,
    ),
    (
        "unknown routing key",
        "skill.frontmatter.unknown_key",
        "warning",
        """
        ---
        name: N
        description: D
        routing:
          hiden: true «
        ---
        Prose.
        """,
    ),
    (
        "complete_when on a block-only skill",
        "skill.complete_when.on_block_only_skill",
        "error",
        """
        ---
        name: N
        description: D
        complete_when: «
          condition: session.demo.done
        ---
        :::ordered_block id=main
        steps:
          - id: one
            action: utter_one
        :::
        """,
    ),
    (
        "duplicate criteria",
        "skill.complete_when.duplicate_criteria",
        "error",
        """
        ---
        name: N
        description: D
        complete_when:
          criteria:
            - address confirmed
            - address confirmed «
        ---
        Prose.
        """,
    ),
    (
        "complete_when unknown key",
        "skill.complete_when.unknown_key",
        "error",
        """
        ---
        name: N
        description: D
        complete_when:
          conditions: session.demo.done «
        ---
        Prose.
        """,
    ),
    (
        "legacy ask_confirmation",
        "skill.tool_constraints.unknown_key",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              ask_confirmation: "Sure?" «
        ---
        Prose.
        """,
    ),
    (
        "unknown confirmation key",
        "skill.tool_constraints.unknown_key",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              requires_confirmation:
                enabled: true
                utter_on_deny: utter_no «
        ---
        Prose.
        """,
    ),
    (
        "constraint item with two keys",
        "skill.tool_constraints.bad_shape",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute: {} «
            lookup: {}
        ---
        Prose.
        """,
    ),
    (
        "constraint requires in map form",
        "skill.tool_constraints.bad_shape",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              requires: «
                session.demo.ok: true
        ---
        Prose.
        """,
    ),
    (
        "confirmation enabled not a bool",
        "skill.tool_constraints.bad_shape",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              requires_confirmation:
                enabled: "sure" «
        ---
        Prose.
        """,
    ),
    (
        "confirmation without enabled",
        "skill.tool_constraints.confirmation_disabled",
        "warning",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              requires_confirmation: «
                utter_for_confirmation: utter_sure
        ---
        Prose.
        """,
    ),
    (
        "constraint listed twice",
        "skill.tool_constraints.duplicate_tool",
        "error",
        """
        ---
        name: N
        description: D
        tool_constraints:
          - reroute:
              on_success: utter_ok
          - reroute: «
              on_failure: utter_fail
        ---
        Prose.
        """,
    ),
    (
        "utter on deactivate",
        "skill.utter.bad_trigger",
        "error",
        """
        ---
        name: N
        description: D
        utter:
          - utter_hello:
              on: deactivate «
        ---
        Prose.
        """,
    ),
    (
        "utter with on and when",
        "skill.utter.bad_trigger",
        "error",
        """
        ---
        name: N
        description: D
        utter:
          - utter_hello: «
              on: activate
              when: session.demo.x
        ---
        Prose.
        """,
    ),
    (
        "utter item is a string",
        "skill.utter.bad_trigger",
        "error",
        """
        ---
        name: N
        description: D
        utter:
          - utter_hello «
        ---
        Prose.
        """,
    ),
    (
        "import_tools mcp without tool",
        "skill.import_tools.bad_entry",
        "error",
        """
        ---
        name: N
        description: D
        import_tools:
          - lookup
          - mcp/depot «
        ---
        Prose.
        """,
    ),
    (
        "import_tools not a list",
        "skill.import_tools.bad_entry",
        "error",
        """
        ---
        name: N
        description: D
        import_tools: lookup «
        ---
        Prose.
        """,
    ),
    (
        "import_tools duplicate",
        "skill.import_tools.duplicate",
        "warning",
        """
        ---
        name: N
        description: D
        import_tools:
          - lookup
          - lookup «
        ---
        Prose.
        """,
    ),
    (
        "else in prose",
        "skill.prose.else_not_supported",
        "error",
        """
        ---
        name: N
        description: D
        ---
        if: session.demo.x
        Say x.

        else: «
        Say y.
        """,
    ),
    (
        "elif in prose",
        "skill.prose.else_not_supported",
        "error",
        """
        ---
        name: N
        description: D
        ---
        if: session.demo.x
        Say x.
        elif: otherwise «
        Say y.
        """,
    ),
    (
        "memory token with two segments",
        "skill.prose.bad_token",
        "error",
        """
        ---
        name: N
        description: D
        ---
        Greet the user.
        Use @memory.project to greet. «
        """,
    ),
    (
        "block token without id",
        "skill.prose.bad_token",
        "error",
        """
        ---
        name: N
        description: D
        ---
        Then go to @block. «
        """,
    ),
    (
        "system memory token",
        "skill.prose.bad_token",
        "error",
        """
        ---
        name: N
        description: D
        ---
        Check @memory.system.pending_tool_confirmation first. «
        """,
    ),
    (
        "bare session reference in prose",
        "skill.prose.bare_session_reference",
        "error",
        """
        ---
        name: N
        description: D
        ---
        Greet the user.

        Call them session.project.first_name always. «
        """,
    ),
    (
        "bare session reference in step instructions",
        "skill.prose.bare_session_reference",
        "error",
        """
        ---
        name: N
        description: D
        ---
        :::ordered_block id=main
        steps:
          - id: talk
            instructions: |
              Be kind.
              Use session.project.first_name. «
        :::
        """,
    ),
    (
        "block token naming no block",
        "skill.prose.unknown_block",
        "error",
        """
        ---
        name: N
        description: D
        ---
        Run @block.missing now. «
        """,
    ),
    (
        "if marker scoping nothing",
        "skill.prose.empty_if",
        "warning",
        """
        ---
        name: N
        description: D
        ---
        if: session.demo.x «

        Always shown.
        """,
    ),
    (
        "empty body",
        "skill.body.empty",
        "warning",
        """
        ---
        name: N
        description: D
        --- «
        """,
    ),
]


@pytest.mark.parametrize(
    ("code", "severity", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_diagnostic_code_and_line(code: str, severity: str, text: str) -> None:
    source, line = marked(text)
    _, diagnostics = parse_text(source)
    assert codes(diagnostics) == [(code, line)]
    assert diagnostics[0].severity == severity
    assert all(d.file == FILE for d in diagnostics)
