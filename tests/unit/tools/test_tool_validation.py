"""Tool-argument validation: every problem at once, deterministic order, never raising."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import fastjsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.tools import (
    ArgumentProblem,
    ToolDefinition,
    retryable_error_text,
    schema_plan,
    tool,
    tool_definition,
    validate_arguments,
    validators,
)


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Address:
    street: str
    zip: str
    unit: int | None = None


@tool(description="Look an order up.")
async def lookup_order(
    order_id: str,
    count: int = 1,
    note: str | None = None,
    colour: Colour = Colour.RED,
    address: Address | None = None,
    tags: tuple[int, ...] = (),
    mode: Literal["fast", "slow"] = "fast",
    context: object = None,
) -> None:
    """Look an order up."""


def _definition() -> ToolDefinition:
    definition = tool_definition(lookup_order)
    assert definition is not None
    return definition


LOOKUP = _definition()


def kinds_and_paths(problems: tuple[ArgumentProblem, ...]) -> list[tuple[str, str]]:
    return [(p.kind, p.path) for p in problems]


def test_valid_arguments_come_back_as_a_plain_dict() -> None:
    raw = '{"order_id": "A1", "count": 2, "note": null, "tags": [1, 2], "mode": "slow"}'
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert problems == ()
    assert arguments == {"order_id": "A1", "count": 2, "note": None, "tags": [1, 2], "mode": "slow"}


@pytest.mark.parametrize("raw", [None, "", "  \n"])
def test_none_and_blank_text_mean_no_arguments(raw: str | None) -> None:
    assert validate_arguments({"type": "object", "properties": {}}, raw) == ({}, ())
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert arguments == {}
    assert kinds_and_paths(problems) == [("missing", "order_id")]


def test_parameters_with_defaults_are_not_required() -> None:
    assert validate_arguments(LOOKUP, '{"order_id": "A1"}') == ({"order_id": "A1"}, ())


def test_defaults_are_not_filled_in() -> None:
    # The tool's own Python defaults apply; the schema's `default` is documentation.
    arguments, _ = validate_arguments(LOOKUP, {"order_id": "A1"})
    assert arguments == {"order_id": "A1"}


def test_missing_required_argument() -> None:
    _, problems = validate_arguments(LOOKUP, '{"count": 3}')
    assert problems == (
        ArgumentProblem(
            kind="missing", path="order_id", message="missing required argument 'order_id'"
        ),
    )


def test_unexpected_argument() -> None:
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "foo": 1}')
    assert problems == (
        ArgumentProblem(kind="extra", path="foo", message="unexpected argument 'foo'"),
    )


def test_mistyped_argument() -> None:
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "count": "three"}')
    assert problems == (
        ArgumentProblem(kind="type", path="count", message="argument 'count' must be integer"),
    )


def test_a_boolean_is_not_an_integer() -> None:
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "count": true}')
    assert kinds_and_paths(problems) == [("type", "count")]


def test_every_problem_is_reported_at_once_in_a_fixed_order() -> None:
    raw = '{"count": "x", "zeta": 1, "foo": 2, "mode": "medium"}'
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert arguments == {"count": "x", "zeta": 1, "foo": 2, "mode": "medium"}
    assert kinds_and_paths(problems) == [
        ("missing", "order_id"),
        ("extra", "foo"),
        ("extra", "zeta"),
        ("type", "count"),
        ("type", "mode"),
    ]
    assert retryable_error_text("lookup_order", problems) == (
        "Invalid arguments for tool 'lookup_order': missing required argument 'order_id'; "
        "unexpected argument 'foo'; unexpected argument 'zeta'; argument 'count' must be "
        "integer; argument 'mode' must be one of ['fast', 'slow']. The tool did not run; "
        "call it again with corrected arguments."
    )


def test_order_does_not_depend_on_the_order_the_model_wrote_keys_in() -> None:
    first = validate_arguments(LOOKUP, '{"b": 1, "mode": 0, "a": 2, "count": "x"}')[1]
    second = validate_arguments(LOOKUP, '{"count": "x", "a": 2, "mode": 0, "b": 1}')[1]
    assert first == second
    # Mistyped arguments follow the schema (signature) order: count before mode.
    assert [p.path for p in first] == ["order_id", "a", "b", "count", "mode"]


def test_nested_object_problems_are_all_reported() -> None:
    raw = '{"order_id": "A1", "address": {"street": 5, "unit": "x", "floor": 2}}'
    _, problems = validate_arguments(LOOKUP, raw)
    assert kinds_and_paths(problems) == [
        ("missing", "address.zip"),
        ("extra", "address.floor"),
        ("type", "address.street"),
        ("type", "address.unit"),
    ]
    assert problems[0].message == "missing required argument 'address.zip'"
    assert problems[3].message == "argument 'address.unit' must be integer or null"


def test_a_nested_object_of_the_wrong_type() -> None:
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "address": "10 Main St"}')
    assert problems == (
        ArgumentProblem(
            kind="type", path="address", message="argument 'address' must be object or null"
        ),
    )


def test_nullable_argument_accepts_null_and_names_both_types() -> None:
    assert validate_arguments(LOOKUP, '{"order_id": "A1", "note": null}')[1] == ()
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "note": 4}')
    assert [p.message for p in problems] == ["argument 'note' must be string or null"]


def test_nullable_any_of_is_described_by_its_types() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
    }
    _, problems = validate_arguments(schema, '{"n": "x"}')
    assert [p.message for p in problems] == ["argument 'n' must be integer or null"]


def test_enum_arguments() -> None:
    assert validate_arguments(LOOKUP, '{"order_id": "A1", "colour": "blue"}')[1] == ()
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "colour": "green"}')
    assert problems == (
        ArgumentProblem(
            kind="type", path="colour", message="argument 'colour' must be one of ['red', 'blue']"
        ),
    )


def test_array_items_are_located_by_index() -> None:
    _, problems = validate_arguments(LOOKUP, '{"order_id": "A1", "tags": [1, "two"]}')
    assert problems == (
        ArgumentProblem(kind="type", path="tags[1]", message="argument 'tags[1]' must be integer"),
    )


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{bad", "not valid JSON"),
        ('{"a": 1,}', "not valid JSON"),
        ("[1, 2]", "not an array"),
        ('"text"', "not a string"),
        ("42", "not a number"),
        ("null", "not null"),
        ('{"count": NaN}', "NaN is not a JSON number"),
        ('{"count": 1e400}', "out of range"),
    ],
)
def test_text_that_is_not_a_json_object(raw: str, fragment: str) -> None:
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert arguments is None
    assert len(problems) == 1 and problems[0].kind == "json" and problems[0].path == ""
    assert fragment in problems[0].message


@pytest.mark.parametrize(
    "raw", [42, ["a"], {"a": object()}, {"a": float("nan")}, {"a": {1: "x"}}, {2: "y"}]
)
def test_python_values_that_are_not_json_objects(raw: Any) -> None:
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert arguments is None
    assert [p.kind for p in problems] == ["json"]


def test_a_read_only_mapping_is_checked_as_plain_json() -> None:
    raw = MappingProxyType({"order_id": "A1", "tags": (1, 2), "colour": Colour.BLUE.value})
    arguments, problems = validate_arguments(LOOKUP, raw)
    assert problems == ()
    assert arguments == {"order_id": "A1", "tags": [1, 2], "colour": "blue"}
    assert type(arguments) is dict and type(arguments["tags"]) is list


def test_other_rules_are_checked_on_the_whole_object() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "minProperties": 2,
    }
    assert validate_arguments(schema, '{"a": 1, "b": 2}') == ({"a": 1, "b": 2}, ())
    _, problems = validate_arguments(schema, '{"a": 1}')
    assert problems == (
        ArgumentProblem(
            kind="schema", path="", message="arguments must contain at least 2 properties"
        ),
    )


def test_whole_object_rules_wait_until_the_parts_are_right() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2}
    _, problems = validate_arguments(schema, '{"a": "x"}')
    assert kinds_and_paths(problems) == [("type", "a")]


def test_open_objects_accept_unknown_arguments() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert validate_arguments(schema, '{"a": 1, "z": 2}')[1] == ()


def test_pattern_properties_are_not_extra() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "patternProperties": {"^x_": {"type": "string"}},
        "additionalProperties": False,
    }
    assert validate_arguments(schema, '{"a": 1, "x_y": "s"}')[1] == ()
    _, problems = validate_arguments(schema, '{"a": 1, "y": "s", "x_z": 3}')
    assert kinds_and_paths(problems) == [("extra", "y")]
    _, problems = validate_arguments(schema, '{"x_z": 3}')
    assert [p.kind for p in problems] == ["schema"]


def test_references_to_the_roots_definitions() -> None:
    schema = {
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "properties": {"p": {"$ref": "#/$defs/Point"}, "q": {"type": "string"}},
        "required": ["p", "q"],
    }
    assert validate_arguments(schema, '{"p": {"x": 1}, "q": "s"}')[1] == ()
    _, problems = validate_arguments(schema, '{"p": {"x": "one"}, "q": 2}')
    assert kinds_and_paths(problems) == [("type", "p.x"), ("type", "q")]


@pytest.mark.parametrize(
    "schema",
    [{"type": "nonsense"}, {"type": "object", "properties": {"a": {"type": 3}}}, {"type": {1}}],
)
def test_an_unusable_schema_is_a_problem_not_an_exception(schema: dict[str, object]) -> None:
    arguments, problems = validate_arguments(schema, '{"a": 1}')
    assert arguments == {"a": 1}
    assert [p.kind for p in problems] == ["schema"]
    assert problems[0].message.startswith("the tool's argument schema cannot be used")


def test_remote_references_are_never_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def no_network(*args: object, **kwargs: object) -> object:
        raise AssertionError("validation tried to fetch a remote schema")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    for ref in ("http://example.invalid/s.json", "file:///etc/passwd", "other.json"):
        _, problems = validate_arguments({"$ref": ref}, "{}")
        assert [p.kind for p in problems] == ["schema"]
        assert "remote references are not fetched" in problems[0].message


def test_each_schema_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    validators.compiled_validator.cache_clear()
    schema_plan.plan_for.cache_clear()
    compiled: list[object] = []
    real_compile = fastjsonschema.compile

    def counting(definition: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        compiled.append(definition)
        return real_compile(definition, *args, **kwargs)

    monkeypatch.setattr(fastjsonschema, "compile", counting)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    validate_arguments(schema, '{"a": "x"}')
    validate_arguments(schema, '{"a": 1}')
    after_first_use = len(compiled)
    assert after_first_use == 2  # the property's sub-schema and the whole schema
    inputs = ('{"a": 2}', '{"a": "y"}', "{}", '{"count": "z", "order_id": 1, "tags": ["x"]}')
    for raw in inputs:
        validate_arguments(json.loads(json.dumps(schema)), raw)  # an equal, new dict
        validate_arguments(LOOKUP, raw)
    after_second_use = len(compiled)
    assert after_second_use > after_first_use  # LOOKUP's sub-schemas, compiled on first need
    for raw in inputs:
        validate_arguments(json.loads(json.dumps(schema)), raw)
        validate_arguments(LOOKUP, raw)
    assert len(compiled) == after_second_use
    assert len({json.dumps(d, sort_keys=True) for d in compiled}) == len(compiled)


def test_retryable_text_without_problems_still_says_what_to_do() -> None:
    assert retryable_error_text("t", ()) == (
        "Invalid arguments for tool 't'. The tool did not run; call it again with corrected "
        "arguments."
    )


def test_retryable_text_sorts_by_kind_and_drops_duplicates() -> None:
    problems = (
        ArgumentProblem(kind="type", path="a", message="argument 'a' must be integer"),
        ArgumentProblem(kind="missing", path="b", message="missing required argument 'b'"),
        ArgumentProblem(kind="type", path="a", message="argument 'a' must be integer"),
    )
    assert retryable_error_text("t", problems) == (
        "Invalid arguments for tool 't': missing required argument 'b'; argument 'a' must be "
        "integer. The tool did not run; call it again with corrected arguments."
    )


def test_retryable_text_is_bounded() -> None:
    raw = json.dumps({f"extra_{i:02d}": i for i in range(30)} | {"order_id": "A1"})
    _, problems = validate_arguments(LOOKUP, raw)
    assert len(problems) == 30
    text = retryable_error_text("lookup_order", problems)
    assert "unexpected argument 'extra_11'" in text
    assert "extra_12" not in text
    assert "and 18 more problem(s)." in text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
ODD_VALUES = st.recursive(
    JSON_VALUES | st.sampled_from([object(), float("nan"), Colour.RED, b"x", (1, 2), {1, 2}]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner, max_size=3)
    ),
    max_leaves=10,
)
SCHEMAS: list[ToolDefinition | dict[str, Any]] = [
    LOOKUP,
    {},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    {
        "type": "object",
        "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "array"}]}},
        "additionalProperties": {"type": "string"},
        "minProperties": 1,
    },
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SCHEMAS), st.one_of(st.text(max_size=40), JSON_VALUES.map(json.dumps)))
def test_random_text_never_raises(schema: ToolDefinition | dict[str, Any], raw: str) -> None:
    arguments, problems = validate_arguments(schema, raw)
    assert arguments is not None or [p.kind for p in problems] == ["json"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(SCHEMAS), ODD_VALUES)
def test_random_python_values_never_raise(
    schema: ToolDefinition | dict[str, Any], raw: Any
) -> None:
    arguments, problems = validate_arguments(schema, raw)
    assert isinstance(problems, tuple)
    if arguments is not None:
        json.dumps(arguments, allow_nan=False)  # whatever comes back is plain JSON


ADDRESSES = st.fixed_dictionaries(
    {"street": st.text(), "zip": st.text()}, optional={"unit": st.none() | st.integers()}
)
VALID_LOOKUPS = st.fixed_dictionaries(
    {"order_id": st.text()},
    optional={
        "count": st.integers(),
        "note": st.none() | st.text(),
        "colour": st.sampled_from(["red", "blue"]),
        "address": st.none() | ADDRESSES,
        "tags": st.lists(st.integers()),
        "mode": st.sampled_from(["fast", "slow"]),
    },
)


@settings(max_examples=200, deadline=None)
@given(VALID_LOOKUPS)
def test_valid_instances_validate(arguments: dict[str, Any]) -> None:
    assert validate_arguments(LOOKUP, json.dumps(arguments)) == (arguments, ())
    assert validate_arguments(LOOKUP, arguments) == (arguments, ())
