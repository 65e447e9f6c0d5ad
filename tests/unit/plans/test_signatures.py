"""Invalidation signatures: tools_sig, pool_sig, LOGIC_SIG (plan-cache spec §1.7, §3.8)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from keel.plans.catalog import Catalog, PlanTool, catalog_of, plan_tool
from keel.plans.intent import Clause, Intent
from keel.plans.plan import Plan, parse_plan
from keel.plans.signatures import DECIDING_MODULES, LOGIC_SIG, logic_sig, pool_sig, tools_sig
from keel.tools.contract import ToolContract

READ = ToolContract(effect="read_only")


def tool(
    name: str, contract: ToolContract = READ, *, code: str = "", params: object = None
) -> PlanTool:
    return plan_tool(name, {"type": "object", "properties": params or {}}, contract, code=code)


def catalog(*tools: PlanTool) -> Catalog:
    return catalog_of(tools)


BASE = (tool("find_files"), tool("delete_files", ToolContract(effect="delete")), tool("list_tasks"))


def plan_using(*names: str) -> Plan:
    parsed, _ = parse_plan({"steps": [{"tool": n, "args": {}} for n in names]})
    assert parsed is not None
    return parsed


def intent(*pairs: str) -> Intent:
    return Intent(
        clauses=tuple(Clause(verb=p.split(":")[0], object=p.split(":")[1]) for p in pairs)
    )


# --- tools_sig ---------------------------------------------------------------------------------


def test_tools_sig_is_16_hex_and_stable() -> None:
    sig = tools_sig(plan_using("find_files", "delete_files"), catalog(*BASE))
    assert re.fullmatch(r"[0-9a-f]{16}", sig)
    assert sig == tools_sig(plan_using("find_files", "delete_files"), catalog(*reversed(BASE)))


def test_tools_sig_is_empty_when_a_tool_is_missing() -> None:
    assert tools_sig(plan_using("find_files", "shred_files"), catalog(*BASE)) == ""


@pytest.mark.parametrize(
    "changed",
    [
        tool("find_files", ToolContract(effect="write")),  # contract
        tool("find_files", ToolContract(effect="read_only", bindings={"q": "structural"})),
        tool("find_files", params={"q": {"type": "string"}}),  # schema
        tool("find_files", code="def find_files(): ..."),  # code
    ],
)
def test_tools_sig_changes_with_a_used_tool(changed: PlanTool) -> None:
    used = plan_using("find_files")
    before = tools_sig(used, catalog(*BASE))
    after = tools_sig(used, catalog(changed, *BASE[1:]))
    assert before != after


def test_tools_sig_ignores_tools_the_plan_does_not_use() -> None:
    used = plan_using("list_tasks")
    before = tools_sig(used, catalog(*BASE))
    changed = catalog(tool("find_files", code="changed"), *BASE[1:], tool("new_tool"))
    assert tools_sig(used, changed) == before


# --- pool_sig ----------------------------------------------------------------------------------


def test_pool_sig_changes_when_a_sibling_family_appears() -> None:
    asked = intent("delete:files")
    before = pool_sig(asked, catalog(*BASE))
    assert pool_sig(asked, catalog(*BASE, tool("delete_files_bulk"))) != before
    assert pool_sig(asked, catalog(*BASE, tool("delete_file"))) != before  # singular too


def test_pool_sig_ignores_unrelated_tools() -> None:
    asked = intent("delete:files")
    before = pool_sig(asked, catalog(*BASE))
    assert pool_sig(asked, catalog(*BASE, tool("send_message"), tool("deletefiles"))) == before
    assert pool_sig(asked, catalog(*BASE, tool("delete_filesystem"))) == before


def test_producer_verbs_are_one_family() -> None:
    asked = intent("find:files")
    before = pool_sig(asked, catalog(*BASE))
    for sibling in ("list_files", "get_files", "read_file"):
        assert pool_sig(asked, catalog(*BASE, tool(sibling))) != before
    assert pool_sig(asked, catalog(*BASE, tool("search_files"))) == before


def test_objects_that_live_in_files_bring_the_files_family() -> None:
    asked = intent("find:images")
    without = pool_sig(asked, catalog(tool("find_images")))
    assert pool_sig(asked, catalog(tool("find_images"), tool("list_files"))) != without


def test_pool_sig_depends_on_the_intent() -> None:
    cat = catalog(*BASE)
    assert pool_sig(intent("find:files"), cat) != pool_sig(intent("list:tasks"), cat)
    assert re.fullmatch(r"[0-9a-f]{16}", pool_sig(Intent(), cat))


def test_pool_sig_of_an_intent_without_clauses_covers_the_whole_catalog() -> None:
    empty = Intent()
    before = pool_sig(empty, catalog(*BASE))
    for new in ("summarize_messages", "deletefiles", "translate"):
        assert pool_sig(empty, catalog(*BASE, tool(new))) != before, new
    assert pool_sig(empty, catalog(*reversed(BASE))) == before  # names, sorted
    changed = tool("list_tasks", code="def list_tasks(): return []")
    assert pool_sig(empty, catalog(*BASE[:2], changed)) == before  # tools_sig covers code
    assert pool_sig(empty, catalog(*BASE[:2])) != before  # a tool gone


def test_a_clause_without_an_object_covers_every_tool_of_its_verb() -> None:
    asked = intent("delete:")
    before = pool_sig(asked, catalog(*BASE))
    assert pool_sig(asked, catalog(*BASE, tool("delete_events"))) != before
    assert pool_sig(asked, catalog(*BASE, tool("send_message"))) == before


# --- LOGIC_SIG ---------------------------------------------------------------------------------


def test_logic_sig_covers_the_deciding_modules() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", LOGIC_SIG)
    assert LOGIC_SIG == logic_sig()
    for name in ("keel.plans.normalise", "keel.plans.intents", "keel.plans.slots"):
        assert name in DECIDING_MODULES
    assert {"keel.plans.compiler", "keel.plans.validator", "keel.plans.admission"} <= set(
        DECIDING_MODULES
    )
    # the binder's clause and lookalike readers decide what a hit serves
    assert {"keel.plans.clauses", "keel.plans.lookalikes"} <= set(DECIDING_MODULES)


def test_logic_sig_changes_when_a_module_source_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "keel_b1_logic_probe.py"
    module.write_text("RULE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    before = logic_sig(["keel_b1_logic_probe"])
    assert logic_sig(["keel_b1_logic_probe"]) == before
    module.write_text("RULE = 2\n")
    importlib.invalidate_caches()
    assert logic_sig(["keel_b1_logic_probe"]) != before


def test_a_missing_module_counts_as_missing() -> None:
    assert logic_sig(["keel.plans.no_such_module"]) != logic_sig(["keel.plans.normalise"])
    assert logic_sig(["keel.plans.no_such_module"]) == logic_sig(["keel.plans.no_such_module"])
