"""One `:::ordered_block id=<id>` fence: attributes, YAML body, steps."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from keel.skills._body import Fence
from keel.skills._steps import read_steps
from keel.skills.blocks import OrderedBlock
from keel.skills.model import Token
from keel.source.reporter import Reporter
from keel.source.suggest import did_you_mean
from keel.source.yaml import LineDict, LineList, load_yaml_safely, type_name

_ATTRIBUTE: Final = re.compile(r"""(?P<key>[A-Za-z_][\w-]*)=(?P<value>"[^"]*"|'[^']*'|\S+)""")
_BLOCK_ID: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BLOCK_KEYS: Final = frozenset({"steps", "name", "description"})


def read_block(
    fence: Fence, rep: Reporter, raw_lines: Sequence[str]
) -> tuple[OrderedBlock | None, tuple[Token, ...]]:
    """The block of `fence` (None when it cannot be used) and the tokens in its steps."""
    block_id, has_id = _fence_id(fence, rep)
    data = _body_data(fence, rep)
    id_in_yaml = data is not None and _id_as_key(data, rep)
    if not has_id and not id_in_yaml:
        rep.error(
            "skill.block.missing_id",
            fence.line,
            "write the block id as a fence attribute: :::ordered_block id=<block_id>",
        )
    if data is None or id_in_yaml or block_id is None:
        return None, ()
    steps = _steps_list(data, fence, rep)
    if steps is None:
        return None, ()
    parsed, tokens = read_steps(steps, rep, raw_lines)
    block = OrderedBlock(
        block_id=block_id,
        line=fence.line,
        name=_text(data, "name", rep),
        description=_text(data, "description", rep),
        steps=parsed,
    )
    return block, tokens


def _body_data(fence: Fence, rep: Reporter) -> LineDict | None:
    """The fence body as a YAML mapping, or None (reported) when it is not one."""
    for index, text in enumerate(fence.body):
        if "\t" in text[: len(text) - len(text.lstrip())]:
            rep.error(
                "skill.block.tab_indent",
                fence.line + 1 + index,
                "ordered-block bodies are YAML: indent with spaces, not tabs",
            )
            return None
    data, problems = load_yaml_safely("\n".join(fence.body), rep.file, fence.line)
    rep.extend(problems)
    if problems:
        return None
    if not isinstance(data, LineDict):
        _not_a_mapping(data, fence, rep)
        return None
    return data


def declared_id(fence: Fence) -> str | None:
    """The `id=` written on the fence, even when the block itself is unusable."""
    for match in _ATTRIBUTE.finditer(fence.attributes):
        if match.group("key") == "id":
            return match.group("value").strip("\"'")
    return None


def _fence_id(fence: Fence, rep: Reporter) -> tuple[str | None, bool]:
    """(usable block id, whether an `id=` attribute was written)."""
    attributes = {m.group("key"): m.group("value") for m in _ATTRIBUTE.finditer(fence.attributes)}
    leftover = _ATTRIBUTE.sub("", fence.attributes).strip()
    for key in [*(k for k in attributes if k != "id"), *([leftover] if leftover else [])]:
        rep.warning(
            "skill.block.unknown_attribute",
            fence.line,
            f"fence attribute {key!r} is ignored (only id=<block_id> is known)",
            key=key,
        )
    raw = attributes.get("id")
    if raw is None:
        return None, False
    block_id = raw.strip("\"'")
    if _BLOCK_ID.fullmatch(block_id) is None:
        rep.error(
            "skill.block.bad_id",
            fence.line,
            f"block id {block_id!r} must be a word such as `verify_then_pick`",
            key=block_id,
        )
        return None, True
    return block_id, True


def _id_as_key(data: LineDict, rep: Reporter) -> bool:
    """Report a block id written in the YAML (`id: x`, or `x:` wrapping `steps:`)."""
    if "id" in data:
        line = data.line_of("id")
    elif len(data) == 1:
        ((key, value),) = data.items()
        if key in _BLOCK_KEYS or not (isinstance(value, LineDict) and "steps" in value):
            return False
        line = data.line_of(key)
    else:
        return False
    rep.error(
        "skill.block.id_as_yaml_key",
        line,
        "the block id is a fence attribute (:::ordered_block id=<block_id>), not a YAML key",
    )
    return True


def _not_a_mapping(data: object, fence: Fence, rep: Reporter) -> None:
    if data is None:
        rep.error("skill.block.no_steps", fence.line, "ordered block is empty; add `steps:`")
        return
    line = data.line if isinstance(data, LineList) else fence.line + 1
    rep.error(
        "skill.block.bad_shape",
        line,
        f"an ordered block body is a mapping with `steps:`, got {type_name(data)}",
    )


def _steps_list(data: LineDict, fence: Fence, rep: Reporter) -> LineList | None:
    for key in data:
        if key not in _BLOCK_KEYS:
            rep.warning(
                "skill.block.unknown_key",
                data.line_of(key),
                f"unknown key {key!r} in ordered block is ignored (known: steps, name, "
                "description)" + did_you_mean(str(key), _BLOCK_KEYS),
                key=str(key),
            )
    steps = data.get("steps")
    if isinstance(steps, LineList) and steps:
        return steps
    if steps is None or isinstance(steps, LineList):
        rep.error(
            "skill.block.no_steps",
            data.line_of("steps") if "steps" in data else fence.line,
            "ordered block has no steps",
        )
    else:
        rep.error(
            "skill.block.bad_shape",
            data.line_of("steps"),
            f"`steps` must be a list of steps, got {type_name(steps)}",
        )
    return None


def _text(data: LineDict, key: str, rep: Reporter) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip()
    rep.error(
        "skill.block.bad_shape",
        data.line_of(key),
        f"block `{key}` must be a string, got {type_name(value)}",
        key=key,
    )
    return None
