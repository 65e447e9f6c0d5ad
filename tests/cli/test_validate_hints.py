"""`keel validate` diagnostics that help (the real command, on a copy of a valid project).

- An unknown name (response, step, memory entry, tool, frontmatter key, skill) ends its
  message with "did you mean" and the closest known names.
- One broken `@tool` in a tools file is reported on its own line; the valid tools of the
  same file still load, so nothing else in the project fails because of it.
- A type hint the schema cannot take is named as the author wrote it (`Weird`), not by
  the module Keel imported the file as.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "broken" / "_base"
SKILL = "skills/orders/skill.md"
TOOLS = "skills/orders/tools.py"


def _project(tmp_path: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """A copy of the base project with `old` replaced by `new` in each named file."""
    project = tmp_path / "p"
    shutil.copytree(BASE, project)
    for rel, (old, new) in edits.items():
        path = project / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return project


def _validate(project: Path) -> tuple[int, list[dict[str, object]], str]:
    env = {**os.environ, "OPENAI_API_KEY": "test-key"}
    result = subprocess.run(
        [sys.executable, "-m", "keel", "validate", str(project), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


def _message(found: list[dict[str, object]], code: str) -> str:
    messages = [str(d["message"]) for d in found if d["code"] == code]
    assert len(messages) == 1, json.dumps(found, indent=1)
    return messages[0]


def test_unknown_response_suggests_the_close_name(tmp_path: Path) -> None:
    project = _project(
        tmp_path, {SKILL: ("utterance: utter_ask_order_id", "utterance: utter_ask_orderid")}
    )
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "response.missing").endswith(
        "which no responses.yml defines; did you mean `utter_ask_order_id`?"
    )


def test_unknown_next_step_suggests_a_step_of_the_block(tmp_path: Path) -> None:
    project = _project(
        tmp_path, {SKILL: ("    collect: order_id\n", "    collect: order_id\n    next: fech\n")}
    )
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "skill.step.unknown_next").endswith("; did you mean `fetch`?")


def test_unknown_memory_reference_suggests_the_declared_entry(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {SKILL: ('requires: "session.orders.order_id"', 'requires: "session.orders.ordr_id"')},
    )
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "memory.unknown_reference").endswith(
        "; did you mean `session.orders.order_id`?"
    )


def test_unknown_collect_entry_suggests_the_declared_entry(tmp_path: Path) -> None:
    project = _project(tmp_path, {SKILL: ("collect: order_id", "collect: orderid")})
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "skill.step.collect_undeclared").endswith("; did you mean `order_id`?")


def test_unknown_tool_suggests_the_skills_tool(tmp_path: Path) -> None:
    project = _project(
        tmp_path, {SKILL: ("execute_tool: lookup_order", "execute_tool: lookup_ordr")}
    )
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "skill.step.unknown_tool").endswith("; did you mean `lookup_order`?")


def test_unknown_frontmatter_key_suggests_the_key(tmp_path: Path) -> None:
    project = _project(tmp_path, {SKILL: ("description: Look", "descripton: Look")})
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "skill.frontmatter.unknown_key") == (
        "unknown frontmatter key 'descripton' is ignored; did you mean `description`?"
    )


def test_unknown_skill_id_suggests_the_skill(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {SKILL: ("  - id: done\n", "  - id: elsewhere\n    link: ordrs\n  - id: done\n")},
    )
    code, found, _ = _validate(project)
    assert code == 1
    assert _message(found, "skill.step.unknown_target").endswith("; did you mean `orders`?")


def test_no_suggestion_when_nothing_is_close(tmp_path: Path) -> None:
    project = _project(tmp_path, {SKILL: ("execute_tool: lookup_order", "execute_tool: zzz")})
    code, found, _ = _validate(project)
    assert code == 1
    assert "did you mean" not in _message(found, "skill.step.unknown_tool")


BROKEN_TOOLS = '''

class Weird:
    """A class the tool schema cannot describe."""


@tool(description="Takes a parameter of a type that has no JSON schema.")
async def broken_tool(thing: Weird) -> ToolResult:
    return ToolResult(llm_response={})


@tool(description="A valid tool written after the broken one.")
async def after_broken(order_id: str) -> ToolResult:
    return ToolResult(llm_response={"order_id": order_id})
'''


def test_a_broken_tool_does_not_hide_the_valid_tools_of_its_file(tmp_path: Path) -> None:
    project = _project(tmp_path, {})
    with (project / TOOLS).open("a", encoding="utf-8") as handle:
        handle.write(BROKEN_TOOLS)
    code, found, _ = _validate(project)
    assert code == 1
    errors = [d for d in found if d["severity"] == "error"]
    # Only the broken tool: lookup_order (used by a step and a constraint) is still there.
    assert [(d["code"], d["file"], d["line"]) for d in errors] == [
        ("tool.definition.invalid", TOOLS, 20)
    ], json.dumps(found, indent=1)
    assert errors[0]["message"] == "parameter 'thing': unsupported annotation `Weird`"


def test_a_bare_tool_decorator_does_not_hide_the_valid_tools(tmp_path: Path) -> None:
    broken = "\n\n@tool\nasync def no_description() -> ToolResult:\n    return ToolResult()\n"
    project = _project(tmp_path, {})
    with (project / TOOLS).open("a", encoding="utf-8") as handle:
        handle.write(broken)
    code, found, _ = _validate(project)
    assert code == 1
    errors = [(d["code"], d["line"]) for d in found if d["severity"] == "error"]
    assert errors == [("tool.definition.invalid", 16)], json.dumps(found, indent=1)


def test_a_generic_type_hint_names_the_authors_class(tmp_path: Path) -> None:
    project = _project(tmp_path, {})
    with (project / TOOLS).open("a", encoding="utf-8") as handle:
        handle.write(BROKEN_TOOLS.replace("thing: Weird", "thing: list[Weird]"))
    _, found, _ = _validate(project)
    message = _message(found, "tool.definition.invalid")
    assert message == "parameter 'thing': unsupported annotation `Weird`"
    assert "keel_project_tools" not in message


# An effectful tool run by an `execute_tool` step is also offered to the model, unless a
# `requires:` gate closes it (Mantle's rule): `keel validate` warns.

UNGATED = ('  - lookup_order:\n      requires: "session.orders.order_id"\n', "")


def test_an_ungated_effectful_step_tool_warns(tmp_path: Path) -> None:
    project = _project(tmp_path, {SKILL: ("tool_constraints:\n" + UNGATED[0], "")})
    code, found, _ = _validate(project)
    assert code == 0, json.dumps(found, indent=1)
    (warning,) = [d for d in found if d["code"] == "tool.step_tool_offered"]
    assert (warning["file"], warning["line"], warning["severity"]) == (SKILL, 12, "warning")
    assert warning["message"] == (
        "execute_tool `lookup_order`: the model is offered this tool too while skill `orders` "
        "is active, and it is effectful (no contract: `write`); close it with a "
        "tool_constraints `requires:` only the block opens (a flag it sets just before this "
        'step), or declare effect="read_only" if it changes nothing'
    )


def test_a_gated_or_read_only_step_tool_does_not_warn(tmp_path: Path) -> None:
    gated = _project(tmp_path / "gated", {})
    _, found, _ = _validate(gated)
    assert not [d for d in found if d["code"] == "tool.step_tool_offered"]
    read_only = _project(
        tmp_path / "read_only",
        {
            SKILL: ("tool_constraints:\n" + UNGATED[0], ""),
            TOOLS: (
                '@tool(description="Look up an order.")',
                '@tool(description="Look up an order.", effect="read_only")',
            ),
        },
    )
    _, found, _ = _validate(read_only)
    assert not [d for d in found if d["code"] == "tool.step_tool_offered"]
