"""Every way a condition can be rejected, with its code and 0-based column."""

from __future__ import annotations

import pytest

from keel.conditions import ERROR_CODES, MAX_DEPTH, ConditionSyntaxError, parse_condition
from keel.errors import KeelError


def rejection(source: str) -> ConditionSyntaxError:
    with pytest.raises(ConditionSyntaxError) as caught:
        parse_condition(source)
    return caught.value


@pytest.mark.parametrize(
    ("source", "column"),
    [("verified", 0), ("  verified", 2), ("session.a.b and verified", 16), ("verified == 1", 0)],
)
def test_unknown_name_message_is_exact(source: str, column: int) -> None:
    error = rejection(source)
    assert error.code == "condition.unknown_name"
    assert error.message == "Unknown name 'verified' in condition expression"
    assert error.column == column


@pytest.mark.parametrize("name", ["true", "false", "none", "null", "yes"])
def test_yaml_spellings_of_constants_are_unknown_names(name: str) -> None:
    source = f"1 == 1 or {name}"
    error = rejection(source)
    assert (error.code, error.column) == ("condition.unknown_name", source.index(name))
    assert error.message == f"Unknown name '{name}' in condition expression"


def test_error_carries_code_message_and_column_and_is_a_keel_error() -> None:
    error = rejection("verified")
    assert isinstance(error, KeelError)
    assert isinstance(error, Exception)
    assert str(error) == error.message
    assert error.code in ERROR_CODES


@pytest.mark.parametrize(
    ("source", "column"),
    [
        ("session", 0),
        ("session.project", 0),
        ("session.project.", 0),
        ("1 == session.project", 5),
        ("session.a.b.c", 0),
        ("1 == 1 or session.a.b.c.d", 10),
        ("session.a.b.5", 0),
        ("session.5.a", 0),
        ("session.'a'.b", 0),
        ("session == 1", 0),
        ("(session.a)", 1),
    ],
)
def test_bad_reference(source: str, column: int) -> None:
    error = rejection(source)
    assert (error.code, error.column) == ("condition.bad_reference", column)
    assert "session.<namespace>.<entry>" in error.message


@pytest.mark.parametrize("source", ["", " ", "\n\t  \r\n"])
def test_empty(source: str) -> None:
    error = rejection(source)
    assert (error.code, error.column) == ("condition.empty", 0)


@pytest.mark.parametrize(
    ("source", "column", "says"),
    [
        ("session.a.b in ('x', 'y')", 12, "'in'"),
        ("session.a.b not in ('x', 'y')", 12, "'not in'"),
        ("session.a.b is None", 12, "'is'"),
        ("session.a.b is not None", 12, "'is'"),
        ("len(session.a.b) > 0", 3, "Function calls"),
        ("session.a.b.lower() == 'x'", 0, "fourth segment"),
        ("(session.a.b)() == 'x'", 13, "Function calls"),
        ("project.a.b", 7, "Attribute access"),
        ("True.real", 4, "Attribute access"),
        ("(session.a.b).real", 13, "Attribute access"),
        ("session.a.b[0] == 1", 11, "Subscripts"),
        ("session.a.b + 1 > 2", 12, "'+'"),
        ("session.a.b - 1 > 2", 12, "'-'"),
        ("1 < session.a.b * 2", 16, "'*'"),
        ("session.a.b / 2", 12, "'/'"),
        ("session.a.b // 2", 12, "'//'"),
        ("session.a.b % 2", 12, "'%'"),
        ("session.a.b ** 2", 12, "'**'"),
        ("session.a.b & 1", 12, "'&'"),
        ("session.a.b | 1", 12, "'|'"),
        ("-session.a.b < 0", 0, "Unary '-'"),
        ("--1", 0, "Unary '-'"),
        ("-(1)", 0, "Unary '-'"),
        ("+1", 0, "Unary '+'"),
        ("~1", 0, "Unary '~'"),
        ("[1, 2] == session.a.b", 0, "List literals"),
        ("session.a.b == {}", 15, "Dict"),
        ("(session.a.b := 1)", 13, "Assignment"),
        ("1 if session.a.b else 2", 2, "'if'"),
        ("lambda: 1", 0, "'lambda'"),
        ("session.a.b == 1 for x", 17, "'for'"),
        ("f'{session.a.b}'", 0, "String prefix"),
        ("session.a.b == r'x'", 15, "String prefix"),
        ("'line\\nbreak'", 5, "escape"),
        ("'\\x41'", 1, "escape"),
        ("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), MAX_DEPTH, "nested too deeply"),
        ("not " * (MAX_DEPTH + 1) + "True", 4 * MAX_DEPTH, "nested too deeply"),
    ],
)
def test_unsupported(source: str, column: int, says: str) -> None:
    error = rejection(source)
    expected = "condition.bad_reference" if says == "fourth segment" else "condition.unsupported"
    assert (error.code, error.column) == (expected, column), error.message
    assert says in error.message


def test_nesting_up_to_the_limit_is_fine() -> None:
    depth = MAX_DEPTH
    parse_condition("(" * depth + "1" + ")" * depth)
    parse_condition("not " * depth + "True")


@pytest.mark.parametrize(
    ("source", "column", "says"),
    [
        ("session.a.b ==", 14, "end of condition"),
        ("session.a.b == ", 15, "end of condition"),
        ("session.a.b and", 15, "end of condition"),
        ("(session.a.b", 0, "never closed"),
        ("((session.a.b)", 0, "never closed"),
        ("session.a.b)", 11, "Unmatched ')'"),
        ("()", 1, "found ')'"),
        ("'abc", 0, "Unterminated"),
        ("1 == \"abc'", 5, "Unterminated"),
        ("'abc\\'", 0, "Unterminated"),
        ("'abc\\", 0, "Unterminated"),
        ("session.a.b = 1", 12, "'=='"),
        ("session.a.b == 1 2", 17, "Unexpected '2'"),
        ("session.a.b session.c.d", 12, "Unexpected 'session'"),
        ("'a' 'b'", 4, "Unexpected"),
        ("(1 2)", 3, "expected ')'"),
        ("$x", 0, "Unexpected character '$'"),
        ("session.a.b == 1 # note", 17, "Unexpected character '#'"),
        ("1 == `x`", 5, "Unexpected character"),
        ("caf\u00e9", 3, "Unexpected character"),
        ("1abc", 0, "Invalid number"),
        ("0x1F", 0, "Invalid number"),
        ("1e", 0, "Invalid number"),
        ("1" * 5000, 0, "too long"),
        ("session.a.b == not session.c.d", 15, "found 'not'"),
        ("and session.a.b", 0, "found 'and'"),
        ("session.a.b or or 1", 15, "found 'or'"),
        ("!session.a.b", 0, "'!'"),
        ("session.a.b ! 1", 12, "'!'"),
        ("session.a.b <> 1", 13, "found '>'"),
        ("session.a.b === 1", 14, "found '='"),
        ("== 1", 0, "found '=='"),
        ("session.a.b, 1", 11, "Unexpected ','"),
        (">", 0, "found '>'"),  # `if: >` in prose: the condition is the literal `>`
    ],
)
def test_syntax(source: str, column: int, says: str) -> None:
    error = rejection(source)
    assert (error.code, error.column) == ("condition.syntax", column), error.message
    assert says in error.message


def test_first_problem_in_the_text_is_reported() -> None:
    error = rejection("verified and session.x")
    assert (error.code, error.column) == ("condition.unknown_name", 0)
