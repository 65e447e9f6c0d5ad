"""The parser: condition text to a `Condition`, by hand, never through Python's parser.

The tokenizer splits the text into tokens. Operators that Python has but conditions do not
(arithmetic, `[`, `:=`, ...) are still tokenized, so the parser can say "not supported"
instead of "unexpected character".

The recursive-descent parser follows this grammar (Python precedence, loosest first)::

    condition  := or_expr END
    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := operand (("==" | "!=" | "<" | "<=" | ">" | ">=") operand)*
    operand    := "(" or_expr ")" | STRING | NUMBER | "-" NUMBER
                | "True" | "False" | "None" | "session" "." NAME "." NAME

Python constructs conditions do not have (`in`, `is`, calls, arithmetic, ...) are
recognised and rejected with `condition.unsupported` rather than a bare syntax error.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from enum import Enum
from typing import Final

from keel.conditions.condition import (
    COMPARE_OPS,
    And,
    Compare,
    CompareOp,
    Comparison,
    Condition,
    Constant,
    MemoryRef,
    Node,
    Not,
    Or,
    Scalar,
    walk,
)
from keel.conditions.errors import (
    BAD_REFERENCE,
    EMPTY,
    SYNTAX,
    UNKNOWN_NAME,
    UNSUPPORTED,
    ConditionSyntaxError,
)
from keel.conditions.names import SESSION, Reference

# The tokenizer.


class Kind(Enum):
    """What sort of token."""

    NAME = "name"
    NUMBER = "number"
    STRING = "string"
    OP = "op"
    END = "end"


@dataclass(frozen=True, kw_only=True, slots=True)
class Token:
    """One token; `value` is the decoded literal for numbers and strings."""

    kind: Kind
    text: str
    column: int
    value: Scalar = None


# YAML folded scalars can leave newlines in a condition; they are plain whitespace here.
_WHITESPACE = frozenset(" \t\n\r\f\v")
_QUOTES = frozenset("'\"")
_ESCAPABLE = frozenset("\\'\"")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_DIGITS = r"\d(?:_?\d)*"
_NUMBER = re.compile(
    rf"(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?", re.ASCII
)
_NAME_CHAR = re.compile(r"[A-Za-z0-9_]", re.ASCII)
_OPERATORS = (
    # Longest first, so `<=` wins over `<`.
    "**", "//", "==", "!=", "<=", ">=", "<<", ">>", ":=", "->",
    "<", ">", "(", ")", ".", "-", "+", "*", "/", "%", "&", "|", "^", "~", "@",
    "[", "]", "{", "}", ",", ":", ";", "=", "!",
)  # fmt: skip
_OPERATOR = re.compile("|".join(re.escape(operator) for operator in _OPERATORS))


def tokenize(source: str) -> tuple[Token, ...]:
    """Split `source` into tokens ending with one `END` token at `len(source)`."""
    tokens: list[Token] = []
    position = 0
    while position < len(source):
        char = source[position]
        if char in _WHITESPACE:
            position += 1
            continue
        token = _next_token(source, position)
        tokens.append(token)
        position += len(token.text)
    tokens.append(Token(kind=Kind.END, text="", column=len(source)))
    return tuple(tokens)


def _next_token(source: str, position: int) -> Token:
    char = source[position]
    if char in _QUOTES:
        return _string(source, position)
    number = _NUMBER.match(source, position)
    if number is not None:
        return _number(source, number.group(), position)
    name = _NAME.match(source, position)
    if name is not None:
        after = name.end()
        if after < len(source) and source[after] in _QUOTES:
            raise ConditionSyntaxError(
                UNSUPPORTED, f"String prefix '{name.group()}' is not supported", position
            )
        return Token(kind=Kind.NAME, text=name.group(), column=position)
    operator = _OPERATOR.match(source, position)
    if operator is not None:
        return Token(kind=Kind.OP, text=operator.group(), column=position)
    raise ConditionSyntaxError(SYNTAX, f"Unexpected character {char!r}", position)


def _number(source: str, text: str, position: int) -> Token:
    after = position + len(text)
    if after < len(source) and _NAME_CHAR.match(source, after):
        bad = _NAME.match(source, after)
        end = bad.end() if bad is not None else after + 1
        raise ConditionSyntaxError(
            SYNTAX, f"Invalid number literal '{source[position:end]}'", position
        )
    try:
        value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        # int() refuses very long digit strings (CPython's int max-digits guard).
        raise ConditionSyntaxError(SYNTAX, "Number literal is too long", position) from None
    return Token(kind=Kind.NUMBER, text=text, column=position, value=value)


def _string(source: str, start: int) -> Token:
    quote = source[start]
    chars: list[str] = []
    position = start + 1
    while position < len(source):
        char = source[position]
        if char == quote:
            end = position + 1
            return Token(
                kind=Kind.STRING, text=source[start:end], column=start, value="".join(chars)
            )
        if char == "\\":
            escaped = source[position + 1 : position + 2]
            if not escaped:
                break
            if escaped not in _ESCAPABLE:
                raise ConditionSyntaxError(
                    UNSUPPORTED,
                    f"Unsupported escape sequence '\\{escaped}'; "
                    "only \\\\, \\' and \\\" are allowed in strings",
                    position,
                )
            chars.append(escaped)
            position += 2
            continue
        chars.append(char)
        position += 1
    raise ConditionSyntaxError(SYNTAX, "Unterminated string literal", start)


# The parser.

MAX_DEPTH: Final = 32
"""Deepest nesting of parentheses and `not` accepted; keeps recursion far from the limit."""

_CONSTANTS: Final[dict[str, bool | None]] = {"True": True, "False": False, "None": None}
_COMPARE: Final[dict[str, CompareOp]] = {op: op for op in COMPARE_OPS}
_OWN_KEYWORDS: Final = frozenset({"and", "or", "not", *_CONSTANTS})
_PYTHON_ONLY_KEYWORDS: Final = frozenset(keyword.kwlist) - _OWN_KEYWORDS
_REFERENCE_FORM: Final = "session.<namespace>.<entry>"
_IN_HINT: Final = "write a disjunction such as x == 'a' or x == 'b'"

# Tokens that may follow a complete operand in Python but not in a condition.
_AFTER_OPERAND: Final[dict[str, tuple[str, str]]] = {
    "(": (UNSUPPORTED, "Function calls are not supported in conditions"),
    ".": (UNSUPPORTED, f"Attribute access is not supported; memory is read as {_REFERENCE_FORM}"),
    "[": (UNSUPPORTED, "Subscripts are not supported in conditions"),
    ":=": (UNSUPPORTED, "Assignment expressions are not supported in conditions"),
    "=": (SYNTAX, "Use '==' to compare values"),
    "!": (SYNTAX, "Unexpected '!'; use '!=' or 'not'"),
    "in": (UNSUPPORTED, f"'in' is not supported; {_IN_HINT}"),
    "is": (UNSUPPORTED, "'is' is not supported; use == or !="),
}
_POSTFIX: Final = frozenset("(.[")
_ARITHMETIC: Final = frozenset("+ - * / // % ** & | ^ << >> @ ~".split())
# Tokens that may start an operand in Python but not in a condition.
_BEFORE_OPERAND: Final[dict[str, tuple[str, str]]] = {
    "+": (UNSUPPORTED, "Unary '+' is not supported in conditions"),
    "~": (UNSUPPORTED, "Unary '~' is not supported in conditions"),
    "[": (UNSUPPORTED, "List literals are not supported in conditions"),
    "{": (UNSUPPORTED, "Dict and set literals are not supported in conditions"),
    "!": (SYNTAX, "Unexpected '!'; use 'not'"),
}


def parse_condition(source: str) -> Condition:
    """Parse condition text; raise `ConditionSyntaxError` (with code and column) if invalid."""
    tokens = tokenize(source)
    if tokens[0].kind is Kind.END:
        raise ConditionSyntaxError(EMPTY, "Condition is empty", 0)
    tree = _Parser(tokens).parse()
    references = frozenset(node.reference for node in walk(tree) if isinstance(node, MemoryRef))
    return Condition(source=source, tree=tree, references=references)


class _Parser:
    """One pass over a token tuple; each method parses one grammar rule."""

    def __init__(self, tokens: tuple[Token, ...]) -> None:
        self._tokens = tokens
        self._index = 0
        self._depth = 0

    def parse(self) -> Node:
        node = self._or()
        token = self._peek()
        if token.kind is not Kind.END:
            if token.text == ")":
                raise ConditionSyntaxError(SYNTAX, "Unmatched ')'", token.column)
            raise _error(SYNTAX, f"Unexpected '{token.text}'; expected an operator", token)
        return node

    # -- rules ---------------------------------------------------------------------------

    def _or(self) -> Node:
        column = self._peek().column
        operands = [self._and()]
        while self._at(Kind.NAME, "or"):
            self._advance()
            operands.append(self._and())
        return operands[0] if len(operands) == 1 else Or(operands=tuple(operands), column=column)

    def _and(self) -> Node:
        column = self._peek().column
        operands = [self._not()]
        while self._at(Kind.NAME, "and"):
            self._advance()
            operands.append(self._not())
        return operands[0] if len(operands) == 1 else And(operands=tuple(operands), column=column)

    def _not(self) -> Node:
        if not self._at(Kind.NAME, "not"):
            return self._comparison()
        token = self._advance()
        self._enter(token)
        operand = self._not()
        self._depth -= 1
        return Not(operand=operand, column=token.column)

    def _comparison(self) -> Node:
        column = self._peek().column
        first = self._operand()
        rest: list[Comparison] = []
        while (op := self._compare_op()) is not None:
            self._advance()
            rest.append(Comparison(op=op, right=self._operand()))
        return Compare(first=first, rest=tuple(rest), column=column) if rest else first

    def _operand(self) -> Node:
        token = self._peek()
        node: Node
        if token.kind is Kind.NUMBER or token.kind is Kind.STRING:
            self._advance()
            node = Constant(value=token.value, column=token.column)
        elif token.kind is Kind.NAME:
            node = self._name()
        elif token.text == "(":
            node = self._group()
        elif token.text == "-":
            node = self._negative()
        else:
            raise self._bad_operand(token)
        self._reject_after_operand()
        return node

    def _group(self) -> Node:
        opening = self._advance()
        self._enter(opening)
        node = self._or()
        closing = self._peek()
        if closing.text == ")" and closing.kind is Kind.OP:
            self._advance()
            self._depth -= 1
            return node
        if closing.kind is Kind.END:
            raise ConditionSyntaxError(SYNTAX, "'(' was never closed", opening.column)
        raise _error(SYNTAX, f"Unexpected '{closing.text}'; expected ')'", closing)

    def _negative(self) -> Node:
        minus = self._advance()
        number = self._peek()
        if number.kind is Kind.NUMBER and isinstance(number.value, int | float):
            self._advance()
            return Constant(value=-number.value, column=minus.column)
        raise _error(UNSUPPORTED, "Unary '-' is only supported on number literals", minus)

    def _name(self) -> Node:
        token = self._advance()
        name = token.text
        if name in _CONSTANTS:
            return Constant(value=_CONSTANTS[name], column=token.column)
        if name == SESSION:
            return self._reference(token)
        if name in _OWN_KEYWORDS:
            raise _error(SYNTAX, f"Expected an operand, found '{name}'", token)
        if name in _PYTHON_ONLY_KEYWORDS:
            raise _error(UNSUPPORTED, f"'{name}' is not supported in conditions", token)
        if self._peek().text in _POSTFIX:
            self._reject_after_operand()  # `len(x)`, `project.x.y`: say what is unsupported
        message = f"Unknown name '{name}' in condition expression"
        raise _error(UNKNOWN_NAME, message, token)

    def _reference(self, session: Token) -> Node:
        segments: list[str] = []
        for _ in range(2):
            dot = self._peek()
            name = self._tokens[self._index + 1] if dot.kind is not Kind.END else dot
            if dot.kind is not Kind.OP or dot.text != "." or name.kind is not Kind.NAME:
                written = ".".join([SESSION, *segments])
                message = f"Invalid memory reference '{written}'; write {_REFERENCE_FORM}"
                raise _error(BAD_REFERENCE, message, session)
            self._index += 2
            segments.append(name.text)
        namespace, entry = segments
        after = self._peek()
        if after.text == "." or (after.kind is Kind.NUMBER and after.text.startswith(".")):
            message = (
                f"Memory reference 'session.{namespace}.{entry}' is followed by a fourth "
                f"segment; write {_REFERENCE_FORM}"
            )
            raise _error(BAD_REFERENCE, message, session)
        return MemoryRef(
            reference=Reference(namespace=namespace, entry=entry), column=session.column
        )

    # -- helpers -------------------------------------------------------------------------

    def _peek(self) -> Token:
        return self._tokens[self._index]

    def _advance(self) -> Token:
        token = self._tokens[self._index]
        if token.kind is not Kind.END:
            self._index += 1
        return token

    def _at(self, kind: Kind, text: str) -> bool:
        token = self._peek()
        return token.kind is kind and token.text == text

    def _compare_op(self) -> CompareOp | None:
        token = self._peek()
        return _COMPARE.get(token.text) if token.kind is Kind.OP else None

    def _enter(self, token: Token) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            message = f"Condition is nested too deeply (more than {MAX_DEPTH} levels)"
            raise _error(UNSUPPORTED, message, token)

    def _reject_after_operand(self) -> None:
        """Raise for a token that continues an operand in Python but not here."""
        token = self._peek()
        if token.kind is Kind.STRING or token.kind is Kind.NUMBER or token.kind is Kind.END:
            return
        if token.kind is Kind.OP and token.text in _ARITHMETIC:
            raise _error(UNSUPPORTED, f"Operator '{token.text}' is not supported", token)
        if token.kind is Kind.NAME and token.text == "not" and self._next_is_name("in"):
            raise _error(UNSUPPORTED, f"'not in' is not supported; {_IN_HINT}", token)
        known = _AFTER_OPERAND.get(token.text)
        if known is not None:
            raise _error(*known, token)
        if token.kind is Kind.NAME and token.text in _PYTHON_ONLY_KEYWORDS:
            raise _error(UNSUPPORTED, f"'{token.text}' is not supported in conditions", token)

    def _next_is_name(self, text: str) -> bool:
        following = self._tokens[min(self._index + 1, len(self._tokens) - 1)]
        return following.kind is Kind.NAME and following.text == text

    def _bad_operand(self, token: Token) -> ConditionSyntaxError:
        if token.kind is Kind.END:
            return _error(SYNTAX, "Unexpected end of condition; expected an operand", token)
        known = _BEFORE_OPERAND.get(token.text)
        if known is not None:
            return _error(*known, token)
        return _error(SYNTAX, f"Expected an operand, found '{token.text}'", token)


def _error(code: str, message: str, token: Token) -> ConditionSyntaxError:
    return ConditionSyntaxError(code, message, token.column)
