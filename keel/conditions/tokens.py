"""The tokenizer: condition text to a tuple of tokens, by hand, never through Python's parser.

Operators that Python has but conditions do not (arithmetic, `[`, `:=`, ...) are still
tokenized, so the parser can say "not supported" instead of "unexpected character".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from keel.conditions.errors import SYNTAX, UNSUPPORTED, ConditionSyntaxError

Scalar = str | int | float | bool | None
"""The value of a literal."""


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
