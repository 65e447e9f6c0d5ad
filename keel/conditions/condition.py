"""`Condition`: a parsed condition, ready to evaluate many times.

The parsed form is a small tree of frozen values. Every node carries the 0-based `column`
where it starts in the source text, so later checks (for example "this skill may not read
that namespace") can point at it.

On construction a `Condition` compiles its tree once into nested closures (its program), so
evaluation is a few calls. The closures take the values of the condition's references as a
sequence, in the order given at compile time; they implement Python semantics and raise
whatever Python raises.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from keel.conditions.names import Reference

# The tree.

Scalar = str | int | float | bool | None
"""The value of a literal."""


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


# The parsed condition.


@dataclass(frozen=True, kw_only=True, slots=True)
class Condition:
    """A parsed condition: its source text, its tree and every memory entry it reads.

    Built by `parse_condition`. On construction the tree is compiled once (the hidden
    `_read_order` and `_program` fields), so that `evaluate` only reads memory and calls.
    """

    source: str
    tree: Node
    references: frozenset[Reference]
    _read_order: tuple[Reference, ...] = field(init=False, repr=False, compare=False)
    _program: Program = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unlisted = {
            node.reference.key
            for node in walk(self.tree)
            if isinstance(node, MemoryRef) and node.reference not in self.references
        }
        if unlisted:
            raise ValueError(f"tree reads references missing from `references`: {unlisted}")
        # Sorted so that readers with side effects (tracing, counters) see a stable order.
        order = tuple(sorted(self.references, key=lambda ref: (ref.namespace, ref.entry)))
        object.__setattr__(self, "_read_order", order)
        object.__setattr__(self, "_program", compile_program(self.tree, order))


# The program: the tree compiled into closures.

Program: TypeAlias = Callable[[Sequence[object]], object]
"""Values of the references (in read order) -> the Python value of the expression."""

_OPERATORS: Final[Mapping[CompareOp, Callable[[Any, Any], Any]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def compile_program(tree: Node, order: Sequence[Reference]) -> Program:
    """Compile `tree`; its references are read from the sequence positions in `order`."""
    return _compile(tree, {reference: index for index, reference in enumerate(order)})


def _compile(node: Node, slots: Mapping[Reference, int]) -> Program:
    if isinstance(node, Constant):
        value = node.value
        return lambda values: value
    if isinstance(node, MemoryRef):
        return operator.itemgetter(slots[node.reference])
    if isinstance(node, Not):
        operand = _compile(node.operand, slots)
        return lambda values: not operand(values)
    if isinstance(node, And | Or):
        parts = tuple(_compile(part, slots) for part in node.operands)
        return _conjunction(parts) if isinstance(node, And) else _disjunction(parts)
    return _chain(node, slots)


def _conjunction(parts: tuple[Program, ...]) -> Program:
    def conjunction(values: Sequence[object]) -> object:
        # Python's `and`: the first falsy operand, else the last one.
        result: object = None
        for part in parts:
            result = part(values)
            if not result:
                return result
        return result

    return conjunction


def _disjunction(parts: tuple[Program, ...]) -> Program:
    def disjunction(values: Sequence[object]) -> object:
        # Python's `or`: the first truthy operand, else the last one.
        result: object = None
        for part in parts:
            result = part(values)
            if result:
                return result
        return result

    return disjunction


def _chain(node: Compare, slots: Mapping[Reference, int]) -> Program:
    first = _compile(node.first, slots)
    links = tuple((_OPERATORS[link.op], _compile(link.right, slots)) for link in node.rest)
    if len(links) == 1:
        ((compare, right),) = links
        return lambda values: compare(first(values), right(values))

    def chain(values: Sequence[object]) -> object:
        # `a < b < c` is `a < b and b < c`, b evaluated once, c only when a < b holds.
        left = first(values)
        result: object = True
        for compare, operand in links:
            right = operand(values)
            result = compare(left, right)
            if not result:
                return result
            left = right
        return result

    return chain
