"""Tools that touch no data: arithmetic, a scratchpad thought, a hand-over to a person."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import cast

from retaildb import failure, success

from keel.tools import ToolResult, tool

_ALLOWED = frozenset("0123456789+-*/(). ")
_MAX_EXPONENT = 1000
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def _value(node: ast.expr) -> float:
    """Python's own arithmetic on the parsed expression; nothing but numbers and operators."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return cast(float, node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    raise ValueError("unsupported expression")


@tool(
    description="Work out an arithmetic expression; the result is rounded to 2 decimals.",
    effect="read_only",
)
async def calculate(expression: str) -> ToolResult:
    """Numbers, + - * /, parentheses and spaces only.

    Args:
        expression: The expression, e.g. '(129.99 - 20) * 2'.
    """
    if not set(expression) <= _ALLOWED:
        return failure("invalid characters in expression")
    try:
        tree = ast.parse(expression, filename="<string>", mode="eval")
        return success(str(round(float(_value(tree.body)), 2)))
    except (SyntaxError, ArithmeticError, ValueError, TypeError) as exc:
        return failure(str(exc))


@tool(
    description="Write down a thought while reasoning; it looks nothing up and changes nothing.",
    effect="read_only",
)
async def think(thought: str) -> ToolResult:
    """Answers with an empty text.

    Args:
        thought: The reasoning to note.
    """
    return success("")


@tool(
    description="Hand the customer over to a human agent, with a summary of their issue.",
    effect="send",
)
async def transfer_to_human_agents(summary: str) -> ToolResult:
    """Only when the customer asks for a person, or the request is outside what these tools
    can do.

    Args:
        summary: The customer's issue in a few sentences, for the human agent.
    """
    return success("Transfer successful")
