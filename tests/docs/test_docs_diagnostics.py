"""docs/diagnostics.md lists every diagnostic code in keel/, and only codes that exist.

A code is a string constant in `keel/**/*.py` (found with `ast`, so comments and docstrings
do not count) that looks like `<area>.<word>[.<word>...]` for one of Keel's code areas.
A code built by an f-string, such as `f"skill.frontmatter.missing_{key}"`, counts as a
prefix: the doc must list a code starting with it, and a documented code may end with any
word after it. The documented codes are the first cells of the tables in the doc.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "keel"
DOC = ROOT / "docs" / "diagnostics.md"

AREAS = (
    "config",
    "project",
    "skill",
    "memory",
    "response",
    "tool",
    "yaml",
    "condition",
    "mcp",
    "endpoints",
    "rephrase",
)
CODE = re.compile(rf"(?:{'|'.join(AREAS)})(?:\.[a-z_]+)+")
CODE_PREFIX = re.compile(rf"(?:{'|'.join(AREAS)})(?:\.[a-z_]*)+")
DOCUMENTED = re.compile(r"`([a-z_]+(?:\.[a-z_]+)+)`")
FILE_NAMES = (".yml", ".yaml", ".md", ".py", ".json", ".jsonl", ".txt")
SEVERITIES = frozenset(
    {"error", "warning", "info", "error or warning", "info or warning", "refusal"}
    | {"exception", "failed run", "fallback"}
)

# Folders whose dotted strings are not codes: sample events holding memory keys.
NOT_CODES = ("stores/conformance/",)
# Wire names of the OpenAI Responses API's stream events (`keel/server/channels_responses.py`).
STREAM_EVENTS = re.compile(
    r"response\.(created|in_progress|completed|failed|output_\w+(\.\w+)*|content_part\.\w+)"
)
# Packages being written in parallel (the turn loop and the model port). Their refusal codes
# are documented when they land; remove an entry to have its codes checked.
UNDOCUMENTED_PACKAGES: tuple[str, ...] = ()


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def _strings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(whole string constants, leading constant parts of f-strings) in one module."""
    parts: set[int] = set()
    prefixes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(value) for value in node.values)
            first = node.values[0] if node.values else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                prefixes.add(first.value)
    whole = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts
    }
    return whole, prefixes


@cache
def _scan() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(codes in keel/, f-string code prefixes, every string constant in keel/)."""
    codes: set[str] = set()
    prefixes: set[str] = set()
    everything: set[str] = set()
    for name, tree in _modules():
        whole, leading = _strings(tree)
        everything |= whole
        if name.startswith(NOT_CODES + UNDOCUMENTED_PACKAGES):
            continue
        codes |= {
            s
            for s in whole
            if CODE.fullmatch(s) and not s.endswith(FILE_NAMES) and not STREAM_EVENTS.fullmatch(s)
        }
        prefixes |= {s for s in leading if CODE_PREFIX.fullmatch(s)}
    return frozenset(codes), frozenset(prefixes), frozenset(everything)


def _table_rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("|") and not set(line) <= set("|- :"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _documented() -> list[tuple[str, str]]:
    """(code, severity) for every table row whose first cell is a dotted code."""
    found = []
    for cells in _table_rows():
        match = DOCUMENTED.fullmatch(cells[0])
        if match is not None:
            found.append((match.group(1), cells[1] if len(cells) > 1 else ""))
    return found


def _built_by(code: str, prefixes: frozenset[str]) -> bool:
    return any(code.startswith(p) and re.fullmatch(r"[a-z_]+", code[len(p) :]) for p in prefixes)


def test_the_scan_finds_codes_of_every_kind() -> None:
    codes, prefixes, _ = _scan()
    assert {"yaml.syntax", "config.env.unset", "skill.step.unknown_next"} <= codes
    assert {"memory.write.write_once", "condition.unsupported", "tool.reserved_name"} <= codes
    assert "skill.frontmatter.missing_" in prefixes
    assert not any(code.endswith(FILE_NAMES) for code in codes)


def test_every_code_in_keel_is_documented() -> None:
    codes, prefixes, _ = _scan()
    documented = {code for code, _ in _documented()}
    missing = sorted(codes - documented)
    assert not missing, f"add these codes to docs/diagnostics.md: {missing}"
    unlisted = sorted(p for p in prefixes if not any(c.startswith(p) for c in documented))
    assert not unlisted, f"document the codes keel builds from these prefixes: {unlisted}"


def test_every_documented_code_exists_in_keel() -> None:
    _, prefixes, everything = _scan()
    stale = sorted(
        code
        for code, _ in _documented()
        if code not in everything and not _built_by(code, prefixes)
    )
    assert not stale, f"docs/diagnostics.md lists codes keel does not have: {stale}"


def test_each_code_is_documented_once_with_a_severity() -> None:
    documented = _documented()
    codes = [code for code, _ in documented]
    assert len(codes) > 100
    assert sorted(c for c in set(codes) if codes.count(c) > 1) == []
    odd = sorted(code for code, severity in documented if severity not in SEVERITIES)
    assert not odd, f"severity must be one of {sorted(SEVERITIES)}: {odd}"
