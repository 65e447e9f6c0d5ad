"""The one module of schema fixes: what providers get, and what is never offered (pure)."""

from __future__ import annotations

import pytest

from keel.mcp.schema_fix import FixedSchema, describe, fix_input_schema, name_problem
from keel.tools.validation import validate_arguments
from keel.tools.validators import Unusable


def _fixed(raw: object) -> FixedSchema:
    result = fix_input_schema(raw)
    assert isinstance(result, FixedSchema), result
    return result


def test_a_closed_object_schema_is_offered_as_it_is() -> None:
    raw = {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
        "additionalProperties": False,
        "title": "get_current_timeArguments",
    }
    fixed = _fixed(raw)
    assert fixed.parameters == raw
    assert fixed.fixes == ()
    assert fixed.parameters is not raw


def test_missing_properties_are_added_openai_agents_449() -> None:
    fixed = _fixed({"type": "object", "additionalProperties": False})
    assert fixed.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert fixed.fixes == ("added empty `properties`",)


def test_an_open_root_is_closed_so_extra_arguments_are_refused_like_python_tools() -> None:
    fixed = _fixed({"type": "object", "properties": {"a": {"type": "string"}}})
    assert fixed.parameters["additionalProperties"] is False
    assert fixed.fixes == ("closed with `additionalProperties: false`",)
    _, problems = validate_arguments(fixed.parameters, {"a": "x", "b": 1})
    assert [p.message for p in problems] == ["unexpected argument 'b'"]
    explicit = _fixed({"type": "object", "properties": {}, "additionalProperties": True})
    assert explicit.parameters["additionalProperties"] is True
    patterned = _fixed({"type": "object", "patternProperties": {"^x_": {}}})
    assert "additionalProperties" not in patterned.parameters


@pytest.mark.parametrize(
    ("raw", "fix"),
    [
        ({}, "added `type: object`"),
        ({"properties": {"a": {"type": "string"}}}, "added `type: object`"),
        ({"type": ["object", "null"], "properties": {}}, "`type` narrowed to `object`"),
    ],
)
def test_object_shaped_schemas_get_type_object(raw: dict[str, object], fix: str) -> None:
    fixed = _fixed(raw)
    assert fixed.parameters["type"] == "object"
    assert fix in fixed.fixes


def test_required_is_cleaned_and_every_required_name_is_described() -> None:
    fixed = _fixed(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a", "b", "a", 3],
        }
    )
    assert fixed.parameters["required"] == ["a", "b"]
    assert fixed.parameters["properties"] == {"a": {"type": "string"}, "b": {}}
    assert set(fixed.fixes) == {
        "cleaned `required`",
        "described required names missing from `properties`",
        "closed with `additionalProperties: false`",
    }
    _, problems = validate_arguments(fixed.parameters, {"a": "x"})
    assert [p.message for p in problems] == ["missing required argument 'b'"]


def test_root_schema_identifiers_are_dropped() -> None:
    fixed = _fixed(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "type": "object",
            "properties": {},
        }
    )
    assert fixed.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert fixed.fixes[-2:] == ("dropped `$schema`", "dropped `$id`")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("not a schema", "not a JSON object"),
        ({"type": "string"}, "type is 'string'"),
        ({"type": "array", "items": {}}, "type is 'array'"),
        ({"anyOf": [{"type": "object"}, {"type": "string"}]}, "no `type: object`"),
        ({"type": "object", "properties": []}, "`properties` is not a mapping"),
        ({"type": "object", "properties": {"a": {"$ref": "https://x.test/a.json"}}}, "checked"),
    ],
)
def test_schemas_that_cannot_be_offered_are_unusable(raw: object, reason: str) -> None:
    result = fix_input_schema(raw)
    assert isinstance(result, Unusable)
    assert reason in result.reason


def test_tool_names_must_meet_the_providers_function_name_rule() -> None:
    assert name_problem("get_current_time") is None
    assert name_problem("a-b_9") is None
    assert name_problem("dotted.name") is not None
    assert name_problem("x" * 65) is not None


def test_the_description_falls_back_to_the_title_then_a_sentence() -> None:
    assert describe(" Find it. ", "Title", "t", "s") == "Find it."
    assert describe(None, "Find a parcel", "t", "s") == "Find a parcel"
    assert describe("", None, "lookup", "depot") == "Tool lookup of the MCP server depot."
