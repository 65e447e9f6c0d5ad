"""Project-wide discovery: skill-local and shared tools, precedence, reserved names."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from keel.tools.discovery import RESERVED_TOOL_NAMES, ToolCatalog, discover_tools

WriteProject = Callable[[dict[str, str]], Path]


def _tool(name: str, description: str, *, params: str = "") -> str:
    return (
        "from keel.tools import tool\n\n\n"
        f"@tool(description={description!r})\n"
        f"async def {name}({params}):\n"
        "    return None\n"
    )


def _codes(catalog: ToolCatalog) -> list[tuple[str, str, str]]:
    return sorted((d.code, d.file, d.severity) for d in catalog.diagnostics)


def test_local_tools_folder_wins_over_tools_py(write_project: WriteProject) -> None:
    root = write_project(
        {
            "skills/billing/tools.py": _tool("refund", "from tools.py")
            + "\n\n"
            + _tool("invoice", "only in tools.py").split("\n", 3)[3],
            "skills/billing/tools/refunds.py": _tool("refund", "from tools/refunds.py"),
        }
    )
    catalog = discover_tools(root)
    tools = catalog.local["billing"]
    assert tools["refund"].description == "from tools/refunds.py"
    assert tools["invoice"].description == "only in tools.py"
    (warning,) = catalog.diagnostics
    assert (warning.code, warning.severity, warning.file, warning.key) == (
        "tool.duplicate_local",
        "warning",
        "skills/billing/tools.py",
        "refund",
    )


def test_clash_between_two_tools_folder_files_is_an_error(write_project: WriteProject) -> None:
    root = write_project(
        {
            "skills/billing/tools/a.py": _tool("refund", "from a"),
            "skills/billing/tools/b.py": _tool("refund", "from b"),
        }
    )
    catalog = discover_tools(root)
    assert catalog.local["billing"]["refund"].description == "from a"
    assert _codes(catalog) == [("tool.duplicate_name", "skills/billing/tools/b.py", "error")]


def test_shared_tools_need_import_and_local_wins(write_project: WriteProject) -> None:
    root = write_project(
        {
            "tools/common.py": _tool("lookup", "shared lookup")
            + "\n\n"
            + _tool("greet", "shared greet").split("\n", 3)[3],
            "skills/orders/tools.py": _tool("lookup", "orders' own lookup"),
            "skills/faq/skill.md": "---\nname: FAQ\n---\n",
        }
    )
    catalog = discover_tools(root)
    assert catalog.diagnostics == ()
    assert set(catalog.shared) == {"lookup", "greet"}
    faq = catalog.tools_for_skill("faq", [])
    assert dict(faq) == {}
    faq = catalog.tools_for_skill("faq", ["greet"])
    assert list(faq) == ["greet"]
    orders = catalog.tools_for_skill("orders", ["lookup", "greet", "mcp/depot:reroute", "nope"])
    assert orders["lookup"].description == "orders' own lookup"
    assert orders["greet"].description == "shared greet"
    assert set(orders) == {"lookup", "greet"}
    assert catalog.missing_imports(["lookup", "mcp/depot:reroute", "nope"]) == ("nope",)
    assert catalog.tools_for_skill("unknown_skill", ["greet"]).keys() == {"greet"}


def test_underscore_files_and_folders_are_skipped(write_project: WriteProject) -> None:
    root = write_project(
        {
            "tools/_private.py": _tool("secret", "skipped"),
            "tools/__init__.py": "raise RuntimeError('never imported')\n",
            "skills/_drafts/tools.py": _tool("draft", "skipped"),
            "skills/billing/tools/_helpers.py": "raise RuntimeError('never imported')\n",
            "skills/billing/tools/notes.txt": "not python",
        }
    )
    catalog = discover_tools(root)
    assert catalog.diagnostics == ()
    assert dict(catalog.shared) == {}
    assert list(catalog.local) == ["billing"]
    assert dict(catalog.local["billing"]) == {}


def test_reserved_names_are_errors_and_dropped(write_project: WriteProject) -> None:
    root = write_project(
        {
            "tools/bad.py": _tool("listen", "shadowing a framework tool"),
            "skills/billing/tools.py": _tool("set_fields", "also reserved"),
        }
    )
    catalog = discover_tools(root)
    assert _codes(catalog) == [
        ("tool.reserved_name", "skills/billing/tools.py", "error"),
        ("tool.reserved_name", "tools/bad.py", "error"),
    ]
    assert "listen" not in catalog.shared
    assert "set_fields" not in catalog.local["billing"]
    assert catalog.tools_for_skill("billing", ["listen"]) == {}


def test_reserved_names_constant() -> None:
    assert {
        "activate",
        "set_fields",
        "complete_skill",
        "cancel_skill",
        "listen",
        "search_knowledge",
        "cannot_help",
        "resolve_tool_confirmation",
        "hangup",
        "action_listen",
    } == RESERVED_TOOL_NAMES


def test_tool_named_like_a_skill_is_warned(write_project: WriteProject) -> None:
    root = write_project(
        {
            "skills/billing/tools.py": _tool("orders", "same name as a skill"),
            "skills/orders/skill.md": "---\nname: Orders\n---\n",
        }
    )
    catalog = discover_tools(root)
    assert _codes(catalog) == [("tool.name_shadows_skill", "skills/billing/tools.py", "warning")]
    assert "orders" in catalog.local["billing"]


def test_hooks_per_skill_and_shared_hooks_ignored(write_project: WriteProject) -> None:
    hook = "def run_after_setting_email(context=None):\n    return None\n"
    root = write_project(
        {
            "skills/signup/tools.py": hook,
            "skills/signup/tools/more.py": hook,
            "tools/common.py": hook,
        }
    )
    catalog = discover_tools(root)
    signup = catalog.hooks_for_skill("signup")
    assert signup["email"].module_file == "skills/signup/tools/more.py"
    assert catalog.hooks_for_skill("other") == {}
    assert _codes(catalog) == [
        ("tool.duplicate_local", "skills/signup/tools.py", "warning"),
        ("tool.hook.shared", "tools/common.py", "warning"),
    ]


def test_module_names_are_unique_per_file_and_project(
    write_project: WriteProject, tmp_path: Path
) -> None:
    same = {"skills/a/tools.py": _tool("t", "a"), "skills/b/tools.py": _tool("t", "b")}
    root = write_project({**same, "skills/a/tools/t2.py": _tool("t2", "a2")})
    catalog = discover_tools(root)
    names = [m.module_name for m in catalog.modules]
    assert len(set(names)) == len(names) == 3
    assert catalog.local["a"]["t"].description == "a"
    assert catalog.local["b"]["t"].description == "b"
    assert all(sys.modules[name].__file__ for name in names)

    other = tmp_path / "other"
    for relative, text in same.items():
        (other / relative).parent.mkdir(parents=True, exist_ok=True)
        (other / relative).write_text(text)
    other_names = {m.module_name for m in discover_tools(other).modules}
    assert not other_names & set(names)


def test_load_problems_are_in_the_catalog(write_project: WriteProject) -> None:
    root = write_project({"skills/billing/tools.py": "def broken(:\n"})
    catalog = discover_tools(root)
    assert _codes(catalog) == [("tool.module.syntax_error", "skills/billing/tools.py", "error")]
    assert dict(catalog.local["billing"]) == {}


def test_empty_project(tmp_path: Path) -> None:
    catalog = discover_tools(tmp_path)
    assert (dict(catalog.local), dict(catalog.shared), catalog.diagnostics) == ({}, {}, ())


def test_two_projects_each_get_their_own_lib(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name / "lib").mkdir(parents=True)
        (tmp_path / name / "tools").mkdir()
        (tmp_path / name / "lib" / "names.py").write_text(f"PROJECT = {name!r}\n")
        (tmp_path / name / "tools" / "which.py").write_text(
            "from lib.names import PROJECT\n\n"
            + _tool("which", "d").replace("return None", "return PROJECT")
        )
    results = []
    for name in ("one", "two"):
        catalog = discover_tools(tmp_path / name)
        results.append(catalog.shared["which"].func.__globals__["PROJECT"])
    assert results == ["one", "two"]
