"""The parsed form of a condition: a small tree of frozen values.

Every node carries the 0-based `column` where it starts in the source text, so later
checks (for example "this skill may not read that namespace") can point at it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from keel.conditions.names import Reference
from keel.conditions.tokens import Scalar

CompareOp = Literal["==", "!=", "<", "<=", ">", ">="]
COMPARE_OPS: tuple[CompareOp, ...] = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True, kw_only=True, slots=True)
class Constant:
    """A literal: string, int, float, True, False or None."""

    value: Scalar
    column: int


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryRef:
    """A read of one memory entry, `session.<namespace>.<entry>`."""

    reference: Reference
    column: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Not:
    """`not operand`; always a bool, as in Python."""

    operand: Node
    column: int


@dataclass(frozen=True, kw_only=True, slots=True)
class And:
    """`a and b and ...`; the value of the first falsy operand, else of the last one."""

    operands: tuple[Node, ...]
    column: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Or:
    """`a or b or ...`; the value of the first truthy operand, else of the last one."""

    operands: tuple[Node, ...]
    column: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    """One link of a comparison chain: the operator and its right operand."""

    op: CompareOp
    right: Node


@dataclass(frozen=True, kw_only=True, slots=True)
class Compare:
    """`first op1 x1 op2 x2 ...`, chained as in Python: `first op1 x1 and x1 op2 x2 ...`."""

    first: Node
    rest: tuple[Comparison, ...]
    column: int


Node = Constant | MemoryRef | Not | And | Or | Compare
"""Any node of a condition tree."""


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree under `node` (itself included), in source order."""
    yield node
    if isinstance(node, Not):
        yield from walk(node.operand)
    elif isinstance(node, And | Or):
        for operand in node.operands:
            yield from walk(operand)
    elif isinstance(node, Compare):
        yield from walk(node.first)
        for link in node.rest:
            yield from walk(link.right)
