"""A condition tree compiled once into nested closures, so evaluation is a few calls.

The closures take the values of the condition's references as a sequence, in the order
given at compile time; they implement Python semantics and raise whatever Python raises.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from keel.conditions.names import Reference
from keel.conditions.nodes import And, Compare, CompareOp, Constant, MemoryRef, Node, Not, Or

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
