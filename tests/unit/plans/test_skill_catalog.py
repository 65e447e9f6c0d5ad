"""`catalog_for_skill`: a skill's tools with merged contracts and code-sensitive digests."""

from __future__ import annotations

import linecache
import textwrap
from dataclasses import replace
from types import MappingProxyType

from keel.plans.catalog import plan_tool
from keel.plans.skill_catalog import catalog_for_skill, tool_source
from keel.project.definition import Skill
from keel.skills import parse_skill
from keel.tools import tool
from keel.tools.contract import ToolContract
from keel.tools.decorator import tool_definition
from keel.tools.definition import ToolDefinition


@tool(
    description="Cancel an order.",
    effect="write",
    bindings={"order_id": "request"},
    idempotency_key=["order_id"],
)
async def cancel_order(order_id: str, reason: str) -> str:
    return order_id


@tool(description="List orders.", effect="read_only")
async def list_orders(status: str) -> str:
    return status


@tool(description="Say hello.")
async def greet(name: str) -> str:
    return name


def _definition(func: object) -> ToolDefinition:
    definition = tool_definition(func)
    assert definition is not None
    return definition


def _skill(constraints: str = "", *tools: ToolDefinition) -> Skill:
    header = "---\nname: N\ndescription: D\n" + textwrap.dedent(constraints).strip("\n")
    document, diagnostics = parse_skill("demo", header + "\n---\nProse.\n", "skills/demo/skill.md")
    assert document is not None and diagnostics == []
    chosen = tools or tuple(_definition(f) for f in (cancel_order, list_orders, greet))
    return Skill(
        document=document,
        tools=MappingProxyType({t.name: t for t in chosen}),
        hooks=MappingProxyType({}),
    )


def test_the_catalog_holds_every_tool_with_its_decorator_contract() -> None:
    catalog = catalog_for_skill(_skill())
    assert list(catalog) == ["cancel_order", "list_orders", "greet"]
    assert catalog["cancel_order"].contract.idempotency_key == ("order_id",)
    assert catalog["list_orders"].contract.effect == "read_only"
    assert catalog["greet"].contract == ToolContract()
    assert catalog["greet"].description == "Say hello."
    assert catalog["greet"].parameters["required"] == ["name"]


def test_names_select_tools_and_skip_unknown_ones() -> None:
    catalog = catalog_for_skill(_skill(), names=["greet", "nope", "list_orders", "greet"])
    assert list(catalog) == ["greet", "list_orders"]


def test_a_constraint_overrides_the_decorator() -> None:
    skill = _skill(
        """
        tool_constraints:
          - cancel_order:
              bindings: {reason: structural}
              idempotency_key: none
              verbs: [call off]
          - greet:
              effect: read_only
        """
    )
    catalog = catalog_for_skill(skill)
    cancel = catalog["cancel_order"].contract
    assert dict(cancel.bindings) == {"order_id": "request", "reason": "structural"}
    assert cancel.idempotency_key is None and cancel.verbs == ("call off",)
    assert cancel.effect == "write"
    greet_contract = catalog["greet"].contract
    assert greet_contract.effect == "read_only" and greet_contract.declared
    plain = catalog_for_skill(_skill())
    assert catalog["greet"].digest != plain["greet"].digest
    assert catalog["list_orders"].digest == plain["list_orders"].digest


def test_the_digest_covers_the_function_source() -> None:
    namespace: dict[str, object] = {"tool": tool}
    first = "@tool(description='d')\nasync def probe(x: str) -> str:\n    return x\n"
    second = first.replace("return x", "return x + x")
    digests = []
    for index, source in enumerate((first, second)):
        filename = f"<probe {index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
        definition = _definition(namespace["probe"])
        assert tool_source(definition) == source
        digests.append(catalog_for_skill(_skill("", definition))["probe"].digest)
        del linecache.cache[filename]
    assert digests[0] != digests[1]


def test_unreadable_source_counts_as_empty() -> None:
    namespace: dict[str, object] = {"tool": tool}
    exec(
        compile(
            "@tool(description='d')\nasync def ghost(x: str) -> str:\n    return x\n",
            "<nowhere>",
            "exec",
        ),
        namespace,
    )
    definition = _definition(namespace["ghost"])
    assert tool_source(definition) == ""
    entry = catalog_for_skill(_skill("", definition))["ghost"]
    assert entry.digest == plan_tool("ghost", definition.json_schema(), ToolContract()).digest


def test_an_mcp_tool_has_no_code_in_its_digest() -> None:
    remote = replace(_definition(greet), mcp_server="srv")
    assert tool_source(remote) == ""
    assert tool_source(_definition(greet)).startswith('@tool(description="Say hello.")')
