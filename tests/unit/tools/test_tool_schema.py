"""JSON schema derivation from type hints, docstrings and defaults."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pytest

from keel.tools.definition import ToolDefinitionError
from keel.tools.schema import function_parameters, parse_arg_descriptions, type_schema


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class Address(TypedDict):
    street: str
    floor: NotRequired[int]


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)


class Node(TypedDict):
    children: list[Node]


STRING = {"type": "string"}
OBJ_FALSE = {"additionalProperties": False}

CASES: list[tuple[str, object, dict[str, Any]]] = [
    ("str", str, STRING),
    ("int", int, {"type": "integer"}),
    ("float", float, {"type": "number"}),
    ("bool", bool, {"type": "boolean"}),
    ("None", None, {"type": "null"}),
    ("NoneType", type(None), {"type": "null"}),
    ("Any", Any, {}),
    ("object", object, {}),
    ("list[int]", list[int], {"type": "array", "items": {"type": "integer"}}),
    ("bare list", list, {"type": "array"}),
    ("typing.List[str]", typing.List[str], {"type": "array", "items": STRING}),  # noqa: UP006
    ("list[Any]", list[Any], {"type": "array"}),
    ("Sequence[str]", typing.Sequence[str], {"type": "array", "items": STRING}),
    ("set[str]", set[str], {"type": "array", "items": STRING, "uniqueItems": True}),
    ("tuple[int, ...]", tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (
        "tuple[int, str]",
        tuple[int, str],
        {
            "type": "array",
            "prefixItems": [{"type": "integer"}, STRING],
            "minItems": 2,
            "maxItems": 2,
        },
    ),
    ("bare tuple", tuple, {"type": "array"}),
    (
        "dict[str, int]",
        dict[str, int],
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ),
    ("dict[str, Any]", dict[str, Any], {"type": "object"}),
    ("bare dict", dict, {"type": "object"}),
    ("Literal str", Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    ("Literal mixed", Literal[1, "a"], {"enum": [1, "a"]}),
    ("Literal bool", Literal[True], {"type": "boolean", "enum": [True]}),
    ("Enum", Color, {"type": "string", "enum": ["red", "green"]}),
    ("IntEnum", Size, {"type": "integer", "enum": [1, 2]}),
    ("Optional[str]", Optional[str], {"type": ["string", "null"]}),  # noqa: UP045
    ("str | None", str | None, {"type": ["string", "null"]}),
    (
        "Optional[Literal]",
        Literal["a"] | None,
        {"type": ["string", "null"], "enum": ["a", None]},
    ),
    (
        "Optional[list[int]]",
        list[int] | None,
        {"type": ["array", "null"], "items": {"type": "integer"}},
    ),
    ("Optional[Any]", Any | None, {}),
    ("Union", Union[int, str], {"anyOf": [{"type": "integer"}, STRING]}),  # noqa: UP007
    (
        "Union with None",
        int | str | None,
        {"anyOf": [{"type": "integer"}, STRING, {"type": "null"}]},
    ),
    (
        "Optional[Union of enums]",
        Optional[Literal[1, "a"]],  # noqa: UP045
        {"anyOf": [{"enum": [1, "a"]}, {"type": "null"}]},
    ),
    (
        "TypedDict",
        Address,
        {
            "type": "object",
            "properties": {"street": STRING, "floor": {"type": "integer"}},
            "required": ["street"],
            **OBJ_FALSE,
        },
    ),
    (
        "dataclass",
        Point,
        {
            "type": "object",
            "properties": {
                "x": {"type": "number"},
                "y": {"type": "number", "default": 0.0},
                "tags": {"type": "array", "items": STRING},
            },
            "required": ["x"],
            **OBJ_FALSE,
        },
    ),
    (
        "list of dataclass",
        list[Point],
        {"type": "array", "items": type_schema(Point, parameter="p")},
    ),
    (
        "Annotated",
        Annotated[int, "How many seats."],
        {"type": "integer", "description": "How many seats."},
    ),
]


@pytest.mark.parametrize(
    ("annotation", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_type_schema_table(annotation: object, expected: dict[str, Any]) -> None:
    assert type_schema(annotation, parameter="p") == expected


@pytest.mark.parametrize(
    "annotation",
    [complex, bytes, datetime.date, dict[int, str], type("Custom", (), {}), Node],
    ids=["complex", "bytes", "date", "int-keyed dict", "plain class", "recursive TypedDict"],
)
def test_unsupported_annotation_names_the_parameter(annotation: object) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        type_schema(annotation, parameter="when")
    assert "'when'" in str(info.value)
    assert info.value.parameter == "when"


async def _everything(  # type: ignore[no-untyped-def]
    name: str,
    count: int,
    ratio: float = 0.5,
    note: str | None = None,
    colour: Color = Color.RED,
    blob: object = None,
    extra=None,
    context: Any = None,
) -> None:
    """Do everything.

    Args:
        name: The customer's name
            as they spelled it.
        count (int): How many.
        ratio: A ratio.

    Returns:
        Nothing at all.
    """


def test_function_parameters_full_schema() -> None:
    derived = function_parameters(_everything)
    assert derived.context_param == "context"
    assert derived.param_names == ("name", "count", "ratio", "note", "colour", "blob", "extra")
    assert derived.parameters == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The customer's name as they spelled it."},
            "count": {"type": "integer", "description": "How many."},
            "ratio": {"type": "number", "default": 0.5, "description": "A ratio."},
            "note": {"type": ["string", "null"], "default": None},
            "colour": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "blob": {"default": None},
            "extra": {"default": None},
        },
        "required": ["name", "count"],
        "additionalProperties": False,
    }


async def _no_context(when: str = "today", limit: int = 3) -> None:
    return None


def test_without_context_everything_optional() -> None:
    derived = function_parameters(_no_context)
    assert derived.context_param is None
    assert derived.parameters["required"] == []
    assert derived.parameters["properties"]["when"] == {"type": "string", "default": "today"}


async def _non_json_default(marker: object = object()) -> None:
    return None


def test_non_json_default_is_optional_but_not_recorded() -> None:
    schema = function_parameters(_non_json_default).parameters
    assert schema["properties"]["marker"] == {}
    assert schema["required"] == []


async def _implicit_optional(code: str = None) -> None:  # type: ignore[assignment]  # noqa: RUF013
    return None


def test_none_default_makes_type_nullable() -> None:
    schema = function_parameters(_implicit_optional).parameters
    assert schema["properties"]["code"] == {"type": ["string", "null"], "default": None}


async def _annotated_wins(
    seats: Annotated[int, "From the annotation."],
) -> None:
    """Args:
    seats: From the docstring.
    """


def test_annotated_description_wins_over_docstring() -> None:
    schema = function_parameters(_annotated_wins).parameters
    assert schema["properties"]["seats"]["description"] == "From the annotation."


async def _star_args(*names: str) -> None:
    return None


async def _star_kwargs(**options: str) -> None:
    return None


async def _positional_only(code: str, /) -> None:
    return None


@pytest.mark.parametrize(
    ("func", "parameter"),
    [(_star_args, "names"), (_star_kwargs, "options"), (_positional_only, "code")],
)
def test_unnameable_parameters_are_definition_errors(func: Any, parameter: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        function_parameters(func)
    assert info.value.parameter == parameter


async def _bad_hint(when: datetime.datetime) -> None:
    return None


def test_unsupported_parameter_annotation() -> None:
    with pytest.raises(ToolDefinitionError, match="'when'"):
        function_parameters(_bad_hint)


async def _unresolvable(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
    return None


def test_unresolvable_string_annotation() -> None:
    with pytest.raises(ToolDefinitionError, match="cannot be resolved"):
        function_parameters(_unresolvable)


async def _bad_context_hint(x: int, context: NotDefinedEither = None) -> None:  # type: ignore[name-defined]  # noqa: F821
    return None


def test_context_annotation_is_never_resolved() -> None:
    assert function_parameters(_bad_context_hint).param_names == ("x",)


def test_docstring_args_forms() -> None:
    doc = """Summary.

    Longer text.

    Arguments:
        first (str): One.
        *rest: Two
            continues here

            and after a blank line.
        **options: Three.
    Raises:
        ValueError: never.
    """
    assert parse_arg_descriptions(doc) == {
        "first": "One.",
        "rest": "Two continues here and after a blank line.",
        "options": "Three.",
    }


def test_docstring_section_ends_at_dedent() -> None:
    doc = """Escalate.

    Args:
        complaint_id: The reference. Leave empty to use the
            complaint already being discussed.

    Refuses on a complaint that is still within its target date.
    """
    assert parse_arg_descriptions(doc) == {
        "complaint_id": "The reference. Leave empty to use the complaint already being discussed."
    }


@pytest.mark.parametrize("doc", [None, "", "No sections here.", "Returns:\n    x: y"])
def test_docstring_without_args(doc: str | None) -> None:
    assert parse_arg_descriptions(doc) == {}
