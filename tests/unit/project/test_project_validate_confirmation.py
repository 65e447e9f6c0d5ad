"""`skill.step.confirmation_result_unguarded`: an `action` step that fills a placeholder from
memory a confirmation-gated `execute_tool` step writes, reached from that step whatever
happened. After a denial the tool has not run, so the author must branch with `next:`."""

from __future__ import annotations

from pathlib import Path

import pytest

from keel.project.load import load_project
from keel.source.diagnostics import Diagnostic

CODE = "skill.step.confirmation_result_unguarded"

AGENT = """\
agent:
  id: library
  persona: You are a small library assistant.
rules:
  - Be brief.
"""
INTEGRATIONS = """\
llm:
  model_group: main
model_groups:
  - id: main
    models:
      - provider: scripted
        model: scripted
"""
MEMORY = """\
schema:
  private:
    new_due_date:
      type: text
      description: The due date after the renewal.
    note:
      type: text
      description: Something the tool does not write.
"""
TOOLS = '''\
from keel.tools import ToolContext, ToolResult, tool


@tool(description="Renew a loan.")
async def renew_loan(book: str, *, context: ToolContext) -> ToolResult:
    """Renew.

    Args:
        book: The title.
    """
    context.memory.set("new_due_date", "2026-02-01")
    return ToolResult(llm_response={"due": "2026-02-01"})
'''
RESPONSES = """\
responses:
  utter_confirm_renewal:
    - text: Renew Dune?
  utter_renewal_kept:
    - text: OK, I left it as it is.
  utter_renewed:
    - text: "Done! Dune is due on {new_due_date}."
  utter_renewed_qualified:
    - text: "Done! Due on {session.renewal.new_due_date}."
  utter_noted:
    - text: "Noted: {note}."
"""
HEADER = """\
---
name: Renewal
description: Renews a loan. Activate for "renew my book".
tool_constraints:
  - renew_loan:
      requires_confirmation:
        enabled: {confirm}
        utter_for_confirmation: utter_confirm_renewal
        utter_on_user_denial: utter_renewal_kept
---
:::ordered_block id=main
steps:
  - id: renew
    execute_tool: renew_loan
    parameters:
      book: Dune
"""


def _diagnostics(tmp_path: Path, steps: str, *, confirm: bool = True) -> list[Diagnostic]:
    skill = tmp_path / "skills" / "renewal"
    skill.mkdir(parents=True)
    (tmp_path / "agent.yml").write_text(AGENT)
    (tmp_path / "integrations.yml").write_text(INTEGRATIONS)
    (tmp_path / "responses.yml").write_text(RESPONSES)
    (skill / "memory.yml").write_text(MEMORY)
    (skill / "tools.py").write_text(TOOLS)
    header = HEADER.replace("{confirm}", "true" if confirm else "false")
    (skill / "skill.md").write_text(header + steps + ":::\n")
    _, diagnostics = load_project(tmp_path)
    return diagnostics


FALLS_THROUGH = """\
  - id: done
    action: utter_renewed
"""


def test_an_action_right_after_the_step_that_uses_its_result_warns(tmp_path: Path) -> None:
    found = [d for d in _diagnostics(tmp_path, FALLS_THROUGH) if d.code == CODE]
    assert len(found) == 1, [d.render() for d in found]
    warning = found[0]
    assert warning.severity == "warning"
    assert warning.file == "skills/renewal/skill.md"
    assert warning.line == 17  # the action step
    assert "utter_renewed" in warning.message and "renew_loan" in warning.message
    assert "{new_due_date}" in warning.message and "next:" in warning.message


BRANCHED = """\
    next:
      - if: session.renewal.new_due_date != None
        then: done
      - else: END
  - id: done
    action: utter_renewed
"""
OTHER_MEMORY = """\
  - id: done
    action: utter_noted
"""


@pytest.mark.parametrize(
    ("steps", "confirm"),
    [(BRANCHED, True), (FALLS_THROUGH, False), (OTHER_MEMORY, True)],
    ids=["branched on the result", "no confirmation", "a placeholder the tool does not write"],
)
def test_no_warning_when_the_result_cannot_be_missing(
    tmp_path: Path, steps: str, confirm: bool
) -> None:
    diagnostics = _diagnostics(tmp_path, steps, confirm=confirm)
    assert [d.render() for d in diagnostics if d.code == CODE] == []
    assert not [d for d in diagnostics if d.severity == "error"], [d.render() for d in diagnostics]


def test_a_plain_next_and_a_qualified_placeholder_warn_too(tmp_path: Path) -> None:
    steps = """\
    next: done
  - id: other
    action: utter_noted
  - id: done
    action: utter_renewed_qualified
"""
    found = [d for d in _diagnostics(tmp_path, steps) if d.code == CODE]
    assert [d.line for d in found] == [20], [d.render() for d in found]
