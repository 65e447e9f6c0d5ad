"""The @tool decorator: what it attaches, and the mistakes it refuses at import time."""

from __future__ import annotations

from typing import Any

import pytest

from keel.errors import ToolError
from keel.tools.context import ToolContext
from keel.tools.decorator import TOOL_ATTRIBUTE, tool, tool_definition
from keel.tools.definition import ToolDefinitionError
from keel.tools.result import ToolResult


@tool(
    description="Find a parcel by tracking number.",
)
async def lookup_parcel(tracking_no: str, context: ToolContext | None = None) -> ToolResult:
    """Find a parcel.

    Args:
        tracking_no: The tracking number as the customer read it.
    """
    return ToolResult(llm_response={"ok": True, "tracking_no": tracking_no})


DEF_LINE = 19  # the `async def lookup_parcel` line above


def test_definition_is_attached_and_function_unchanged() -> None:
    definition = tool_definition(lookup_parcel)
    assert definition is not None
    assert getattr(lookup_parcel, TOOL_ATTRIBUTE) is definition
    assert definition.func is lookup_parcel
    assert definition.name == "lookup_parcel"
    assert definition.description == "Find a parcel by tracking number."
    assert definition.context_param == "context"
    assert definition.param_names == ("tracking_no",)
    assert definition.module_file == __file__
    assert definition.line == DEF_LINE
    assert definition.memory_writes == ()
    assert definition.json_schema() == {
        "type": "object",
        "properties": {
            "tracking_no": {
                "type": "string",
                "description": "The tracking number as the customer read it.",
            }
        },
        "required": ["tracking_no"],
        "additionalProperties": False,
    }


async def test_decorated_function_is_still_callable() -> None:
    result = await lookup_parcel("P1", context=None)
    assert result == ToolResult(llm_response={"ok": True, "tracking_no": "P1"})


def test_parameters_are_read_only_and_json_schema_is_a_copy() -> None:
    definition = tool_definition(lookup_parcel)
    assert definition is not None
    with pytest.raises(TypeError):
        definition.parameters["type"] = "array"  # type: ignore[index]
    copy = definition.json_schema()
    copy["properties"]["tracking_no"]["type"] = "integer"
    assert definition.json_schema()["properties"]["tracking_no"]["type"] == "string"


def test_name_override() -> None:
    @tool(description="Renamed.", name="find-parcel_v2")
    async def anything() -> None:
        return None

    definition = tool_definition(anything)
    assert definition is not None
    assert definition.name == "find-parcel_v2"
    assert definition.json_schema()["properties"] == {}


def test_plain_function_has_no_definition() -> None:
    def helper() -> None:
        return None

    assert tool_definition(helper) is None


def test_bare_tool_raises_tool_error() -> None:
    async def bare() -> None:
        return None

    with pytest.raises(ToolDefinitionError, match=r"description") as info:
        tool(bare)
    assert isinstance(info.value, ToolError)
    assert info.value.function == "bare"
    assert info.value.line is not None


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"description": ""}, {"description": "   "}, {"description": 42}],
    ids=["missing", "empty", "blank", "not a string"],
)
def test_description_is_mandatory(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ToolDefinitionError, match="description"):
        tool(**kwargs)


@pytest.mark.parametrize("name", ["", "has space", "9lives", "x" * 65, 3])
def test_invalid_name_override(name: object) -> None:
    with pytest.raises(ToolDefinitionError, match="tool name"):
        tool(description="d", name=name)  # type: ignore[call-overload]


def test_sync_function_is_refused() -> None:
    def sync_tool(x: int) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="not async") as info:
        tool(description="d")(sync_tool)  # type: ignore[type-var]
    assert info.value.function == "sync_tool"


def test_async_generator_is_refused() -> None:
    async def streaming() -> Any:
        yield 1

    with pytest.raises(ToolDefinitionError, match="async generator"):
        tool(description="d")(streaming)


def test_unsupported_annotation_is_refused_with_parameter_name() -> None:
    async def takes_bytes(payload: bytes) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="'payload'") as info:
        tool(description="d")(takes_bytes)
    assert info.value.parameter == "payload"
    assert info.value.function == "takes_bytes"
    assert info.value.line is not None


def test_var_kwargs_are_refused() -> None:
    async def loose(**kwargs: Any) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="kwargs"):
        tool(description="d")(loose)
