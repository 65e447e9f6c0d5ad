"""skill.md text -> `SkillDocument` plus diagnostics, without ever raising on bad input.

A skill file is three languages: YAML frontmatter between a leading `---` line and a
closing `---`; markdown prose (with column-0 `if:` markers); and `:::ordered_block`
fences whose body is YAML again. Every finding carries the real line of the file.
Only what this one file can tell is checked here; references to tools, responses,
memory and other skills are checked by the project builder.
"""

from __future__ import annotations

from collections.abc import Sequence

from keel.skills._block import declared_id, read_block
from keel.skills._body import Fence, split_body
from keel.skills._frontmatter import Frontmatter, read_frontmatter
from keel.skills.blocks import OrderedBlock
from keel.skills.model import SkillDocument, Token
from keel.skills.steps import CallStep, LinkStep
from keel.source.diagnostics import Diagnostic
from keel.source.reporter import Reporter
from keel.source.suggest import did_you_mean
from keel.source.yaml import LineDict, LineList, load_yaml_safely

DELIMITER = "---"


def parse_skill(
    skill_id: str, text: str, file: str
) -> tuple[SkillDocument | None, list[Diagnostic]]:
    """Parse one skill.md. The document is None when the frontmatter cannot be read.

    `skill_id` is the folder name; `file` is the path shown in diagnostics.
    """
    rep = Reporter(file=file)
    lines = split_lines(text)
    front = _frontmatter(lines, rep)
    if front is None:
        return None, _sorted(rep.diagnostics)
    frontmatter, close = front
    body = split_body(lines[close + 1 :], close + 2, rep)
    blocks, block_tokens = _blocks(body.fences, rep, lines)
    document = SkillDocument(
        skill_id=skill_id,
        file=file,
        name=frontmatter.name,
        description=frontmatter.description,
        requires=frontmatter.requires,
        complete_when=frontmatter.complete_when,
        import_tools=frontmatter.import_tools,
        tool_constraints=frontmatter.tool_constraints,
        utter=frontmatter.utter,
        disabled=frontmatter.disabled,
        routing=frontmatter.routing,
        tier=frontmatter.tier,
        max_turns=frontmatter.max_turns,
        examples=frontmatter.examples,
        planner=frontmatter.planner,
        plan_cache=frontmatter.plan_cache,
        history_tool_results=frontmatter.history_tool_results,
        paragraphs=body.paragraphs,
        blocks=blocks,
        tokens=tuple(sorted((*body.tokens, *block_tokens), key=lambda t: t.line)),
        key_lines=frontmatter.key_lines,
    )
    _check_document(document, {declared_id(f) for f in body.fences}, rep)
    if not document.paragraphs and not document.blocks:
        rep.warning("skill.body.empty", close + 1, "the skill has no instructions and no blocks")
    return document, _sorted(rep.diagnostics)


def split_lines(text: str) -> list[str]:
    """The lines of `text` (any newline convention, a leading BOM dropped)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _frontmatter(lines: Sequence[str], rep: Reporter) -> tuple[Frontmatter, int] | None:
    """The frontmatter and the index of its closing line, or None (reported)."""
    if lines[0].rstrip() != DELIMITER:
        rep.error(
            "skill.markdown.invalid_frontmatter_delimiter",
            1,
            "skill.md must start with a `---` line opening the YAML frontmatter",
        )
        return None
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == DELIMITER), None)
    if close is None:
        rep.error(
            "skill.markdown.invalid_frontmatter_delimiter",
            1,
            "the frontmatter opened here has no closing `---` line",
        )
        return None
    data, problems = load_yaml_safely("\n".join(lines[1:close]), rep.file, 1)
    rep.extend(problems)
    if problems:
        return None
    if not isinstance(data, LineDict):
        rep.error(
            "skill.frontmatter.not_a_mapping",
            data.line if isinstance(data, LineList) else 2,
            "the frontmatter must be a YAML mapping with at least `name` and `description`",
        )
        return None
    return read_frontmatter(data, rep), close


def _blocks(
    fences: Sequence[Fence], rep: Reporter, lines: Sequence[str]
) -> tuple[tuple[OrderedBlock, ...], tuple[Token, ...]]:
    blocks: list[OrderedBlock] = []
    tokens: list[Token] = []
    for fence in (f for f in fences if f.closed):
        block, found = read_block(fence, rep, lines)
        tokens.extend(found)
        if block is None:
            continue
        if any(b.block_id == block.block_id for b in blocks):
            rep.error(
                "skill.block.duplicate_id",
                block.line,
                f"block id {block.block_id!r} is used twice in this skill",
                key=block.block_id,
            )
            continue
        blocks.append(block)
    return tuple(blocks), tuple(tokens)


def _check_document(document: SkillDocument, fence_ids: set[str | None], rep: Reporter) -> None:
    """Checks that need the whole file: frontmatter against body, tokens against blocks.

    `fence_ids` are the ids written on every fence, usable or not: a token naming a block
    that failed to parse is not reported again.
    """
    if document.complete_when is not None and document.is_block_only:
        rep.error(
            "skill.complete_when.on_block_only_skill",
            document.complete_when.line,
            "complete_when needs prose; a block-only skill completes when its block ends",
            key="complete_when",
        )
    for token in document.tokens:
        if token.kind == "block" and token.target not in fence_ids:
            rep.error(
                "skill.prose.unknown_block",
                token.line,
                f"{token.text} names no ordered block of this skill"
                + did_you_mean(token.target, (i for i in fence_ids if i)),
                key=token.target,
            )
    _check_reachable(document, rep)


def _check_reachable(document: SkillDocument, rep: Reporter) -> None:
    """Warn about blocks nothing can enter (the first block of a block-only skill is the entry)."""
    entered = {t.target for t in document.tokens if t.kind == "block"}
    for block in document.blocks:
        entered.update(s.target for s in block.steps if isinstance(s, CallStep | LinkStep))
    if document.is_block_only:
        entered.add(document.blocks[0].block_id)
    for block in document.blocks:
        if block.block_id not in entered:
            rep.warning(
                "skill.block.unreferenced",
                block.line,
                f"nothing enters block {block.block_id!r}: reference it as "
                f"@block.{block.block_id} in the prose",
                key=block.block_id,
            )


def _sorted(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: d.line or 0)
