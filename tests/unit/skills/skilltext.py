"""Helpers for skill.md tests.

`marked(text)` lets a case show the line a diagnostic must point at: the line ending with
` «` is the expected line; the marker is removed before parsing.
"""

from __future__ import annotations

import textwrap

from keel.skills import SkillDocument, parse_skill
from keel.source.diagnostics import Diagnostic

MARK = " «"
FILE = "skills/demo/skill.md"
HEADER = "---\nname: Demo\ndescription: A demo skill.\n"


def marked(text: str) -> tuple[str, int]:
    """(text without the marker, 1-based line that carried it)."""
    lines = textwrap.dedent(text).lstrip("\n").split("\n")
    hits = [i for i, line in enumerate(lines) if line.endswith(MARK)]
    assert len(hits) == 1, f"exactly one line must end with {MARK!r}"
    lines[hits[0]] = lines[hits[0]].removesuffix(MARK)
    return "\n".join(lines), hits[0] + 1


def parse(text: str, skill_id: str = "demo") -> tuple[SkillDocument | None, list[Diagnostic]]:
    """parse_skill on dedented text."""
    return parse_skill(skill_id, textwrap.dedent(text).lstrip("\n"), FILE)


def codes(diagnostics: list[Diagnostic]) -> list[tuple[str, int | None]]:
    """(code, line) of each diagnostic."""
    return [(d.code, d.line) for d in diagnostics]


def parse_text(text: str) -> tuple[SkillDocument | None, list[Diagnostic]]:
    """parse_skill on text used as is."""
    return parse_skill("demo", text, FILE)
