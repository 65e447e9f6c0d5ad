"""Helper tools that touch no reservation: arithmetic, a scratchpad, and the human hand-off."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from keel.tools import ToolResult, tool

ALLOWED = frozenset("0123456789+-*/(). ")
"""The characters an expression may contain."""

MAX_EXPONENT = 10_000
"""`a ** b` with a larger `b` is refused (it could run for a very long time)."""

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _value(node: ast.AST) -> Any:
    """Evaluate a parsed arithmetic expression with Python's own number semantics."""
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if (
            isinstance(node.op, ast.Pow)
            and isinstance(right, int | float)
            and abs(right) > MAX_EXPONENT
        ):
            raise OverflowError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Tuple):
        return tuple(_value(item) for item in node.elts)
    if isinstance(node, ast.Call):
        raise TypeError(f"'{type(_value(node.func)).__name__}' object is not callable")
    raise TypeError(f"unsupported expression: {type(node).__name__}")


def evaluate(expression: str) -> str:
    """The value rounded to two decimals as Python prints a float (`"255.0"`, `"71.96"`),
    or `Error: ...`. Only numbers, + - * / ( ) . and spaces are accepted."""
    if not set(expression) <= ALLOWED:
        return "Error: invalid characters in expression"
    try:
        tree = compile(expression, "<string>", "eval", ast.PyCF_ONLY_AST)
        return str(round(float(_value(tree)), 2))
    except Exception as exc:
        return f"Error: {exc}"


@tool(description="Work out an arithmetic expression, such as a fare difference or a refund total.")
async def calculate(expression: str) -> ToolResult:
    """The result, rounded to two decimals.

    Args:
        expression: Numbers with + - * / and parentheses, e.g. '(1206 - 1003) * 2'.
    """
    text = evaluate(expression)
    if text.startswith("Error: "):
        return ToolResult(error=text.removeprefix("Error: "))
    return ToolResult(llm_response=text)


@tool(
    description=(
        "A private scratchpad: write down reasoning (for example checking a rule against "
        "the facts). It changes nothing and returns nothing."
    )
)
async def think(thought: str) -> ToolResult:
    """Nothing is stored or looked up; the thought only stays in the conversation.

    Args:
        thought: The reasoning to write down.
    """
    return ToolResult(llm_response="")


@tool(
    description=(
        "Hand the customer over to a human agent, with a summary of their issue. Only when "
        "they ask for a person, or when the request is outside what these tools can do."
    )
)
async def transfer_to_human_agents(summary: str) -> ToolResult:
    """Queue the hand-off.

    Args:
        summary: The customer's issue and what was done so far, in a few sentences.
    """
    return ToolResult(llm_response="Transfer successful")
