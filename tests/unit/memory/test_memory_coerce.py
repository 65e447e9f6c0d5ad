"""Coercion tables: raw value -> declared type."""

from __future__ import annotations

from types import MappingProxyType
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.memory.coerce import CoerceResult, coerce, coerce_value
from keel.memory.schema import FieldType, MemoryField

ACCEPT: list[tuple[FieldType, object, object]] = [
    # text
    ("text", "Berlin", "Berlin"),
    ("text", "", ""),
    ("text", "  spaced  ", "  spaced  "),
    ("text", 42, "42"),
    ("text", 2.5, "2.5"),
    ("text", True, "true"),
    ("text", False, "false"),
    # bool
    ("bool", True, True),
    ("bool", False, False),
    ("bool", "true", True),
    ("bool", "TRUE", True),
    ("bool", " Yes ", True),
    ("bool", "1", True),
    ("bool", "false", False),
    ("bool", "No", False),
    ("bool", "0", False),
    ("bool", 1, True),
    ("bool", 0, False),
    # int
    ("int", 7, 7),
    ("int", -3, -3),
    ("int", 4.0, 4),
    ("int", "12", 12),
    ("int", " -5 ", -5),
    ("int", "+8", 8),
    ("int", "3.0", 3),
    ("int", "1e3", 1000),
    ("int", 10**30, 10**30),
    # float
    ("float", 1.5, 1.5),
    ("float", 2, 2.0),
    ("float", "2.25", 2.25),
    ("float", " .5 ", 0.5),
    ("float", "-1e-2", -0.01),
    ("float", "7", 7.0),
    # list
    ("list", ["a", 1], ["a", 1]),
    ("list", ("a", "b"), ["a", "b"]),
    ("list", [], []),
    ("list", '["a", "b"]', ["a", "b"]),
    ("list", " [1, [2]] ", [1, [2]]),
    ("list", [{"k": (1, 2)}], [{"k": [1, 2]}]),
    # json
    ("json", {"a": [1, 2]}, {"a": [1, 2]}),
    ("json", MappingProxyType({"a": (1,)}), {"a": [1]}),
    ("json", '{"a": 1}', {"a": 1}),
    ("json", "[1, 2]", [1, 2]),
    ("json", "42", 42),
    ("json", "true", True),
    ("json", '"quoted"', "quoted"),
    ("json", "plain words", "plain words"),
    ("json", "NaN", "NaN"),
    ("json", 3, 3),
    ("json", False, False),
    # categorical (enum: Small, Large, 10)
    ("categorical", "Small", "Small"),
    ("categorical", "small", "Small"),
    ("categorical", " LARGE ", "Large"),
    ("categorical", 10, "10"),
    ("categorical", "10", "10"),
    # any
    ("any", "x", "x"),
    ("any", "[1]", "[1]"),
    ("any", 3.5, 3.5),
    ("any", ("a",), ["a"]),
    ("any", {"k": None}, {"k": None}),
]

REJECT: list[tuple[FieldType, object]] = [
    ("text", ["a"]),
    ("text", {"a": 1}),
    ("text", float("nan")),
    ("text", object()),
    ("bool", "maybe"),
    ("bool", ""),
    ("bool", 2),
    ("bool", 1.0),
    ("bool", ["true"]),
    ("int", True),
    ("int", False),
    ("int", 2.5),
    ("int", "2.5"),
    ("int", "seven"),
    ("int", ""),
    ("int", "1_000"),
    ("int", "0x10"),
    ("int", float("inf")),
    ("int", "nan"),
    ("int", "9" * 5000),
    ("int", [1]),
    ("float", True),
    ("float", "abc"),
    ("float", "1,5"),
    ("float", "inf"),
    ("float", float("nan")),
    ("float", 10**400),
    ("float", "1e400"),
    ("list", "a,b"),
    ("list", "[1, 2"),
    ("list", '{"a": 1}'),
    ("list", "[NaN]"),
    ("list", 5),
    ("list", {"a": 1}),
    ("list", [object()]),
    ("json", {1: "a"}),
    ("json", float("inf")),
    ("json", [float("nan")]),
    ("json", {"a": object()}),
    ("json", {1, 2}),
    ("categorical", "medium"),
    ("categorical", True),
    ("categorical", ["Small"]),
    ("categorical", ""),
    ("any", object()),
    ("any", {("a",): 1}),
]

ENUM = ("Small", "Large", "10")


@pytest.mark.parametrize(("type_", "raw", "expected"), ACCEPT)
def test_accepted(type_: FieldType, raw: object, expected: object) -> None:
    result = coerce_value(type_, raw, ENUM if type_ == "categorical" else ())
    assert result == CoerceResult(ok=True, value=expected)
    assert type(result.value) is type(expected)


@pytest.mark.parametrize(("type_", "raw"), REJECT)
def test_rejected(type_: FieldType, raw: object) -> None:
    result = coerce_value(type_, raw, ENUM if type_ == "categorical" else ())
    assert not result.ok
    assert result.value is None
    assert result.error


@pytest.mark.parametrize("type_", get_args(FieldType))
def test_none_clears_for_every_type(type_: FieldType) -> None:
    assert coerce_value(type_, None, ENUM) == CoerceResult.success(None)


def test_every_type_has_rows_in_both_tables() -> None:
    types = set(get_args(FieldType))
    assert {row[0] for row in ACCEPT} == types
    assert {row[0] for row in REJECT} == types


def test_coerce_uses_the_field_declaration() -> None:
    field = MemoryField(
        namespace="shop",
        name="size",
        type="categorical",
        visibility="public",
        enum_values=("S", "M"),
    )
    assert coerce(field, "m") == CoerceResult.success("M")
    rejected = coerce(field, "XL")
    assert rejected.error is not None and "S, M" in rejected.error


def test_categorical_without_values_refuses_everything() -> None:
    result = coerce_value("categorical", "x")
    assert result.error is not None and "none declared" in result.error


def test_error_messages_stay_short() -> None:
    result = coerce_value("int", "x" * 500)
    assert result.error is not None and len(result.error) < 120


def test_coerced_values_do_not_alias_the_input() -> None:
    raw = ["a", ["b"]]
    result = coerce_value("list", raw)
    assert result.value == raw
    assert result.value is not raw


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(derandomize=True)
@given(type_=st.sampled_from(get_args(FieldType)), raw=JSON_VALUES)
def test_coercion_is_idempotent(type_: FieldType, raw: object) -> None:
    first = coerce_value(type_, raw, ENUM if type_ == "categorical" else ())
    if type_ == "json" and isinstance(first.value, str):
        return  # a json string that is itself JSON text ('"42"' -> "42" -> 42) is parsed again
    if first.ok:
        assert coerce_value(type_, first.value, ENUM if type_ == "categorical" else ()) == first


def test_json_text_inside_a_json_string_is_parsed_each_time() -> None:
    once = coerce_value("json", '"42"')
    assert once.value == "42"
    assert coerce_value("json", once.value).value == 42


@settings(derandomize=True)
@given(raw=st.text())
def test_strings_never_raise(raw: str) -> None:
    for type_ in get_args(FieldType):
        result = coerce_value(type_, raw, ENUM if type_ == "categorical" else ())
        assert result.ok or result.error


def test_enum_values_limit_an_int_entry() -> None:
    field = MemoryField(
        namespace="canteen",
        name="party_size",
        type="int",
        visibility="private",
        enum_values=("1", "2", "4"),
    )
    assert coerce(field, 2) == CoerceResult.success(2)
    assert coerce(field, "4") == CoerceResult.success(4)
    assert coerce(field, 2.0) == CoerceResult.success(2)
    refused = coerce(field, 3)
    assert refused.error is not None and "1, 2, 4" in refused.error
    assert coerce(field, "seven").error is not None
