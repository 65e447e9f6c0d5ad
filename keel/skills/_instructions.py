"""An ordered-block step's `instructions:` text: its `if:` lines, lines and tokens.

Mantle projects write conditional instructions inside a step the way prose does:

    instructions: |
      Ask what happened.
      if: session.file_claim.policy_name == "Car"
        Ask for the licence plate.

A line of the text that starts with `if:` (column 0 of the YAML scalar) scopes the lines
that follow it, up to the next blank line or `if:` line; when the first of them is
indented, the scope also ends at the first line that is not (the indentation is removed).
The condition is the rest of the `if:` line, evaluated like a prose `if:` marker at prompt
build. The other lines are plain instructions, always shown.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from keel.skills._condition import read_condition
from keel.skills._tokens import locate, scan_prose
from keel.skills.model import Token
from keel.skills.steps import InstructionPart
from keel.source.reporter import Reporter

_ELSE: Final = re.compile(r"else\s*:|elif\b.*:")


@dataclass(frozen=True, kw_only=True, slots=True)
class Instructions:
    """What the splitter found in one `instructions:` text."""

    parts: tuple[InstructionPart, ...]
    """Empty when the text has no `if:` line."""
    tokens: tuple[Token, ...]


def read_instructions(
    text: str, raw_lines: Sequence[str], start: int, rep: Reporter
) -> Instructions:
    """Split `text` (a YAML scalar whose key is on file line `start`) and scan its tokens."""
    lines = text.strip("\n").split("\n")
    numbers = text_line_numbers(raw_lines, start, lines)
    parts: list[InstructionPart] = []
    plain: list[int] = []
    prose = list(lines)  # `if:` lines blanked out: they are not prose to scan

    def flush() -> None:
        if plain:
            body = "\n".join(lines[i] for i in plain)
            parts.append(InstructionPart(text=body, line=numbers[plain[0]]))
            plain.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("if:"):
            if _ELSE.match(line):
                rep.warning(
                    "skill.step.else_in_instructions",
                    numbers[index],
                    "step instructions have no else:/elif:; this line and what follows are "
                    "shown as written. Write one `if:` line per case",
                    key=line.split(":", 1)[0].strip(),
                )
            plain.append(index)
            index += 1
            continue
        flush()
        prose[index] = ""
        source = line[3:]
        condition = read_condition(
            rep,
            source.strip(),
            numbers[index],
            where="if: line in step instructions",
            column_offset=3 + len(source) - len(source.lstrip()),
        )
        end = _scope_end(lines, index + 1)
        if end == index + 1:
            rep.warning(
                "skill.prose.empty_if",
                numbers[index],
                "this if: line scopes no instructions (they must follow directly)",
            )
        else:
            body = textwrap.dedent("\n".join(lines[index + 1 : end]))
            parts.append(InstructionPart(text=body, line=numbers[index + 1], condition=condition))
        index = end
    flush()
    tokens = scan_prose(
        "\n".join(prose), lambda i, needle: locate(raw_lines, numbers[i], needle), rep
    )
    has_if = any(line.startswith("if:") for line in lines)
    return Instructions(parts=tuple(parts) if has_if else (), tokens=tuple(tokens))


@functools.lru_cache(maxsize=512)
def instruction_parts(text: str) -> tuple[InstructionPart, ...]:
    """The parts of step instructions `text` (see the module docstring; empty without `if:`
    lines). For rendering: the loader has already reported what is wrong in the text."""
    return read_instructions(text, text.split("\n"), 1, Reporter(file="")).parts


def _scope_end(lines: Sequence[str], first: int) -> int:
    """Index just after the lines an `if:` line at `first - 1` scopes."""
    indented = first < len(lines) and lines[first][:1] in (" ", "\t")
    end = first
    while end < len(lines):
        line = lines[end]
        if not line.strip() or line.startswith("if:"):
            break
        if indented and line[:1] not in (" ", "\t"):
            break
        end += 1
    return end


def text_line_numbers(raw_lines: Sequence[str], start: int, lines: Sequence[str]) -> list[int]:
    """The file line of each line of a YAML scalar's text whose key is on line `start`.

    YAML does not report the lines inside a scalar, so each text line is looked up in the
    file, in order, from where the previous one was found: equal lines get their own line
    numbers. A line that cannot be found (a folded scalar joins lines) keeps the line of
    the previous one.
    """
    numbers: list[int] = []
    cursor, search = start, start
    for line in lines:
        found = _find(raw_lines, search, line.strip())
        if found is not None:
            cursor, search = found, found + 1
        numbers.append(cursor)
    return numbers


def _find(raw_lines: Sequence[str], start: int, needle: str) -> int | None:
    if not needle:
        return None
    for candidate in (needle, " ".join(needle.split()[:3])):
        for number in range(max(start, 1), len(raw_lines) + 1):
            if candidate in raw_lines[number - 1]:
                return number
    return None
