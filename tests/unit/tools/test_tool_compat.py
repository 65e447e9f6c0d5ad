"""Mantle tool modules load unchanged through the rasa.* compatibility shim."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from keel.tools import LocalMemory, LocalToolContext, ToolResult, discover_tools, invoke_tool
from keel.tools.compat import (
    SERVED_MODULES,
    MantleCompatFinder,
    install_compat_shim,
    is_compat_module,
    uninstall_compat_shim,
)
from keel.tools.decorator import tool as keel_tool
from keel.tools.result import InvalidMemoryValue

WriteProject = Callable[[dict[str, str]], Path]

# Written the way Mantle projects write them (spec §5.1 and public example projects).
MANTLE_SKILL_TOOLS = '''
"""Parcel tools, local to skills/parcel/."""

from __future__ import annotations

from typing import Optional

from rasa.mantle.tools.decorator import ToolContext, tool
from rasa.mantle.tools.result import ToolResult

from lib import parcels

PARCEL_KEY = "parcel_id"


def _conversation_id() -> str:
    try:
        from rasa.mantle.orchestration.turn_context import current_turn_context

        return current_turn_context().sender_id
    except Exception:
        return "offline"


@tool(description="Find a parcel by tracking number.")
async def lookup_parcel(
    tracking_no: str,
    carrier: Optional[str] = None,
    context: ToolContext = None,
) -> ToolResult:
    """Find a parcel.

    Args:
        tracking_no: The tracking number as the customer read it,
            letters and digits.
        carrier: Which carrier, when the customer said.
    """
    found = parcels.find(tracking_no)
    if context is not None:
        context.memory.set(PARCEL_KEY, found["id"])
        await context.send(f"Found {found['id']} for {_conversation_id()}.")
    return ToolResult(llm_response={"ok": True, "status": found["status"]})


@tool(description="Internal post-write hook for new_address.")
async def run_after_setting_new_address(context: ToolContext = None) -> ToolResult:
    if not context.memory.get("new_address"):
        return ToolResult(llm_response={"ok": False, "error": "empty"}, error="empty")
    return ToolResult(llm_response={"ok": True})
'''

LIB_PARCELS = """
from rasa.calm_v2.tools.decorator import ToolContext


def find(tracking_no: str) -> dict:
    return {"id": "P-" + tracking_no.upper(), "status": "in transit"}


def memory_value(context: ToolContext, key: str):
    return context.memory.get(key)
"""

CALM_V2_SHARED = '''
"""Shared tools written for the Maestro / calm_v2 beta."""

from __future__ import annotations

from rasa.calm_v2.tools.decorator import ToolContext, tool
from rasa.calm_v2.tools.result import ToolResult


@tool(description="Create a human handoff ticket.")
async def create_handoff_ticket(reason: str, context: ToolContext = None) -> ToolResult:
    """Create a handoff ticket.

    Args:
        reason: Why the customer wants a human agent.
    """
    return ToolResult(llm_response={"ticket": "HO-1", "reason": reason})
'''

FALLBACK_IMPORTS = """
try:
    from rasa.mantle.tools.decorator import ToolContext, tool
    from rasa.mantle.tools.result import ToolResult
except ImportError:
    from rasa.calm_v2.tools.decorator import ToolContext, tool
    from rasa.calm_v2.tools.result import ToolResult


@tool(description="Say hello.")
async def hello(name: str, context: ToolContext = None) -> ToolResult:
    return ToolResult(llm_response=f"hello {name}")
"""


@pytest.fixture
def mantle_project(write_project: WriteProject) -> Path:
    return write_project(
        {
            "skills/parcel/tools.py": MANTLE_SKILL_TOOLS,
            "skills/parcel/skill.md": "---\nname: Parcel\ndescription: parcels\n---\n",
            "lib/parcels.py": LIB_PARCELS,
            "tools/handoff.py": CALM_V2_SHARED,
            "tools/fallback.py": FALLBACK_IMPORTS,
        }
    )


async def test_mantle_module_loads_unchanged_and_runs(mantle_project: Path) -> None:
    catalog = discover_tools(mantle_project)
    assert catalog.diagnostics == ()
    lookup = catalog.local["parcel"]["lookup_parcel"]
    assert lookup.json_schema() == {
        "type": "object",
        "properties": {
            "tracking_no": {
                "type": "string",
                "description": "The tracking number as the customer read it, letters and digits.",
            },
            "carrier": {
                "type": ["string", "null"],
                "default": None,
                "description": "Which carrier, when the customer said.",
            },
        },
        "required": ["tracking_no"],
        "additionalProperties": False,
    }
    assert [w.key for w in lookup.memory_writes] == ["parcel_id"]

    context = LocalToolContext(sender_id="caller-7")
    result = await lookup.func("ab1", context=context)
    assert result == ToolResult(llm_response={"ok": True, "status": "in transit"})
    assert context.memory.get("parcel_id") == "P-AB1"
    assert context.sent == ["Found P-AB1 for offline."]

    via_engine = LocalToolContext(sender_id="caller-7")
    await invoke_tool(lookup, {"tracking_no": "ab1"}, via_engine)
    assert via_engine.sent == ["Found P-AB1 for caller-7."]


async def test_mantle_hook_decorated_with_tool_is_a_hook(mantle_project: Path) -> None:
    catalog = discover_tools(mantle_project)
    assert "run_after_setting_new_address" not in catalog.local["parcel"]
    hook = catalog.hooks_for_skill("parcel")["new_address"]
    rejected = await hook.func(context=LocalToolContext())
    assert rejected.is_error
    accepted = await hook.func(context=LocalToolContext(memory=LocalMemory({"new_address": "x"})))
    assert not accepted.is_error


async def test_calm_v2_and_fallback_modules_load(mantle_project: Path) -> None:
    catalog = discover_tools(mantle_project)
    handoff = catalog.shared["create_handoff_ticket"]
    result = await handoff.func("wants a person", context=LocalToolContext())
    assert isinstance(result, ToolResult)
    assert result.llm_response == {"ticket": "HO-1", "reason": "wants a person"}
    hello = catalog.shared["hello"]
    assert (await hello.func("Ada", context=None)).llm_response == "hello Ada"
    assert catalog.tools_for_skill("parcel", ["hello"]).keys() == {"lookup_parcel", "hello"}


def test_shim_objects_are_keels() -> None:
    install_compat_shim()
    decorator = importlib.import_module("rasa.mantle.tools.decorator")
    old = importlib.import_module("rasa.calm_v2.tools.decorator")
    result = importlib.import_module("rasa.mantle.tools.result")
    package = importlib.import_module("rasa.calm_v2.tools")
    assert decorator.tool is old.tool is package.tool is keel_tool
    assert result.ToolResult is ToolResult
    assert decorator.InvalidMemoryValue is InvalidMemoryValue
    assert all(is_compat_module(m) for m in (decorator, old, result, package))


def test_install_is_idempotent_and_appends() -> None:
    uninstall_compat_shim()
    try:
        assert install_compat_shim() is True
        assert install_compat_shim() is False
        finders = [f for f in sys.meta_path if isinstance(f, MantleCompatFinder)]
        assert len(finders) == 1
        assert sys.meta_path[-1] is finders[0]
    finally:
        install_compat_shim()


@pytest.mark.usefixtures("isolated_rasa")
def test_serves_rasa_when_none_is_installed() -> None:
    if importlib.machinery.PathFinder.find_spec("rasa") is not None:
        pytest.skip("a real rasa is installed here")
    install_compat_shim()
    assert is_compat_module(importlib.import_module("rasa"))
    assert "rasa.mantle.tools.decorator" in SERVED_MODULES


def _fake_rasa(base: Path, with_mantle: bool) -> None:
    package = base / "rasa"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("REAL = True\n")
    if with_mantle:
        tools = package / "mantle" / "tools"
        tools.mkdir(parents=True)
        (package / "mantle" / "__init__.py").write_text("")
        (tools / "__init__.py").write_text("")
        (tools / "decorator.py").write_text("def tool(**options):\n    return lambda f: f\n")


@pytest.mark.usefixtures("isolated_rasa")
def test_real_rasa_with_mantle_is_not_shadowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_rasa(tmp_path, with_mantle=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    install_compat_shim()
    decorator = importlib.import_module("rasa.mantle.tools.decorator")
    assert not is_compat_module(decorator)
    assert decorator.tool is not keel_tool
    assert Path(decorator.__file__ or "").is_relative_to(tmp_path)


@pytest.mark.usefixtures("isolated_rasa")
def test_real_rasa_without_mantle_gets_only_the_missing_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_rasa(tmp_path, with_mantle=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    install_compat_shim()
    decorator = importlib.import_module("rasa.mantle.tools.decorator")
    rasa = importlib.import_module("rasa")
    assert rasa.REAL is True
    assert not is_compat_module(rasa)
    assert is_compat_module(decorator)
    assert decorator.tool is keel_tool


def test_unserved_names_are_not_found() -> None:
    install_compat_shim()
    assert MantleCompatFinder().find_spec("rasa.mantle.validation", None) is None
    assert MantleCompatFinder().find_spec("json", None) is None
