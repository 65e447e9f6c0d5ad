"""Loading one tool module: definitions, hooks, and a diagnostic for every kind of failure."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from keel.source.diagnostics import Diagnostic
from keel.tools.definition import HookDefinition, MemoryWrite, ToolDefinition
from keel.tools.load import load_tool_file, load_tool_module

WriteProject = Callable[[dict[str, str]], Path]

GOOD = """
from keel.tools import ToolContext, ToolResult, tool
from lib.elsewhere import imported_tool

KEY = "project.customer_id"


def _remember(context):
    context.memory.set("last_lookup", True)


@tool(description="Second in the file.")
async def second(context: ToolContext | None = None) -> ToolResult:
    return ToolResult()


@tool(
    description="First by name, defined later.",
)
async def alpha(code: str, context: ToolContext | None = None) -> ToolResult:
    _remember(context)
    context.memory.set(KEY, code)
    return ToolResult(llm_response=code)


def helper() -> int:
    return 1
"""

ELSEWHERE = """
from keel.tools import tool


@tool(description="Defined in lib, imported by the tool module.")
async def imported_tool() -> None:
    return None
"""


def _load(
    root: Path, relative: str, name: str
) -> tuple[tuple[ToolDefinition, ...], tuple[HookDefinition, ...], list[Diagnostic]]:
    return load_tool_module(root / relative, project_root=root, module_name=name)


def _only(diagnostics: list[Diagnostic]) -> Diagnostic:
    assert len(diagnostics) == 1, [d.render() for d in diagnostics]
    return diagnostics[0]


def test_good_module(write_project: WriteProject) -> None:
    root = write_project({"tools/good.py": GOOD, "lib/elsewhere.py": ELSEWHERE})
    tools, hooks, diagnostics = load_tool_module(
        root / "tools/good.py", project_root=root, module_name="keel_test_load.good"
    )
    assert diagnostics == []
    assert hooks == ()
    assert [t.name for t in tools] == ["second", "alpha"]
    second, alpha = tools
    assert second.module_file == "tools/good.py"
    assert (second.line, alpha.line) == (12, 19)
    assert alpha.memory_writes == (
        MemoryWrite(key="last_lookup", line=8, method="set"),
        MemoryWrite(key="project.customer_id", line=21, method="set"),
    )
    assert second.memory_writes == ()
    assert sys.modules["keel_test_load.good"].alpha is alpha.func


def test_module_wide_memory_writes(write_project: WriteProject) -> None:
    root = write_project({"tools/good.py": GOOD, "lib/elsewhere.py": ELSEWHERE})
    loaded = load_tool_file(root / "tools/good.py", project_root=root, module_name="keel_test_w")
    assert [w.key for w in loaded.memory_writes] == ["last_lookup", "project.customer_id"]
    assert loaded.file == "tools/good.py"


@pytest.mark.parametrize(
    ("source", "code", "line", "fragment"),
    [
        ("x = 1\ndef broken(:\n    pass\n", "tool.module.syntax_error", 2, "syntax error"),
        (
            "import os\nimport not_a_real_module_xyz\n",
            "tool.module.import_error",
            2,
            "not_a_real_module_xyz",
        ),
        ("x = 1\n\nfrom os import no_such_name\n", "tool.module.import_error", 3, "no_such_name"),
        (
            "from rasa.mantle.validation import validate_project\n",
            "tool.module.import_error",
            1,
            "Keel serves only",
        ),
        ("x = 1\nraise RuntimeError('boom')\n", "tool.module.load_error", 2, "boom"),
        ("import sys\nsys.exit(3)\n", "tool.module.load_error", 2, "SystemExit"),
        (
            "from keel.tools import tool\n\n@tool\nasync def bare():\n    pass\n",
            "tool.definition.invalid",
            4,
            "description",
        ),
        (
            "from keel.tools import tool\n\n\n@tool()\nasync def nodesc():\n    pass\n",
            "tool.definition.invalid",
            4,
            "description",
        ),
        (
            "from keel.tools import tool\n\n@tool(description='d')\ndef sync(x: int):\n    pass\n",
            "tool.definition.invalid",
            4,
            "async",
        ),
        (
            "from keel.tools import tool\n\n@tool(description='d')\n"
            "async def f(x: bytes):\n    pass\n",
            "tool.definition.invalid",
            4,
            "'x'",
        ),
    ],
    ids=[
        "syntax",
        "module not found",
        "import name",
        "unserved rasa module",
        "runtime error",
        "system exit",
        "bare @tool",
        "missing description",
        "sync function",
        "bad annotation",
    ],
)
def test_failures_become_diagnostics(
    write_project: WriteProject, source: str, code: str, line: int, fragment: str
) -> None:
    root = write_project({"tools/bad.py": source})
    name = f"keel_test_load.bad_{abs(hash(source))}"
    tools, hooks, diagnostics = _load(root, "tools/bad.py", name)
    problem = _only(diagnostics)
    assert (problem.code, problem.file, problem.line) == (code, "tools/bad.py", line)
    assert fragment in problem.message
    assert problem.severity == "error"
    assert (tools, hooks) == ((), ())
    # A bad @tool fails only its function: the module is imported (its other tools load).
    assert (name in sys.modules) == (code == "tool.definition.invalid")


def test_import_error_deep_in_a_helper_points_at_the_import(write_project: WriteProject) -> None:
    root = write_project(
        {
            "lib/needs_missing.py": "import definitely_missing_pkg_abc\n",
            "tools/uses.py": "import os\n\nfrom lib import needs_missing\n",
        }
    )
    problem = _only(_load(root, "tools/uses.py", "keel_test_load.uses")[2])
    assert (problem.code, problem.line, problem.key) == (
        "tool.module.import_error",
        3,
        "definitely_missing_pkg_abc",
    )


def test_unreadable_files(write_project: WriteProject) -> None:
    root = write_project({})
    (root / "tools").mkdir()
    (root / "tools/binary.py").write_bytes(b"x = '\xff\xfe'\n")
    for relative in ("tools/missing.py", "tools/binary.py"):
        problem = _only(_load(root, relative, "keel_test_load.unreadable")[2])
        assert (problem.code, problem.file, problem.line) == (
            "tool.module.unreadable",
            relative,
            None,
        )


def test_hooks_are_collected_and_never_tools(write_project: WriteProject) -> None:
    source = """
    from keel.tools import ToolContext, ToolResult, tool


    @tool(description="Internal post-write hook for spoken_location.")
    async def run_after_setting_spoken_location(context: ToolContext = None) -> ToolResult:
        context.memory.set("located", True)
        return ToolResult()


    def run_after_setting_email():
        return None


    def run_after_setting_phone(number):
        return None


    def run_after_setting_():
        return None


    @tool(description="A real tool.")
    async def real() -> ToolResult:
        return ToolResult()
    """
    root = write_project({"skills/report/tools.py": source})
    tools, hooks, diagnostics = _load(root, "skills/report/tools.py", "keel_test_load.hooks")
    assert [t.name for t in tools] == ["real"]
    by_entry = {h.entry: h for h in hooks}
    assert set(by_entry) == {"spoken_location", "email"}
    located = by_entry["spoken_location"]
    assert (located.is_async, located.context_param, located.line) == (True, "context", 5)
    assert located.memory_writes == (MemoryWrite(key="located", line=6, method="set"),)
    email = by_entry["email"]
    assert (email.is_async, email.context_param, email.module_file) == (
        False,
        None,
        "skills/report/tools.py",
    )
    codes = sorted((d.code, d.line) for d in diagnostics)
    assert codes == [("tool.hook.invalid", 18), ("tool.hook.invalid_signature", 14)]


def test_annotation_defined_after_the_tool_is_resolved(write_project: WriteProject) -> None:
    source = """
    from __future__ import annotations

    from typing import TypedDict

    from keel.tools import tool


    @tool(description="Uses a type defined further down.")
    async def book(slot: Slot) -> None:
        return None


    class Slot(TypedDict):
        day: str
    """
    root = write_project({"tools/later.py": source})
    tools, _hooks, diagnostics = _load(root, "tools/later.py", "keel_test_load.later")
    assert diagnostics == []
    (book,) = tools
    assert book.json_schema()["properties"]["slot"]["properties"] == {"day": {"type": "string"}}


def test_unresolvable_annotation_is_a_definition_error(write_project: WriteProject) -> None:
    source = (
        "from keel.tools import tool\n\n\n@tool(description='d')\n"
        "async def f(x: 'Nope'):\n    pass\n"
    )
    root = write_project({"tools/nope.py": source})
    problem = _only(_load(root, "tools/nope.py", "keel_test_load.nope")[2])
    assert (problem.code, problem.line, problem.key) == ("tool.definition.invalid", 5, "f")


def test_duplicate_tool_name_in_one_module(write_project: WriteProject) -> None:
    source = """
    from keel.tools import tool


    @tool(description="one", name="same")
    async def one():
        pass


    @tool(description="two", name="same")
    async def two():
        pass
    """
    root = write_project({"tools/dup.py": source})
    tools, _hooks, diagnostics = _load(root, "tools/dup.py", "keel_test_load.dup")
    assert [t.func.__name__ for t in tools] == ["one"]
    problem = _only(diagnostics)
    assert (problem.code, problem.line, problem.key) == ("tool.duplicate_name", 10, "same")


def test_foreign_rasa_decorator_is_warned_about(write_project: WriteProject) -> None:
    source = """
    def tool(**options):
        return lambda func: func


    tool.__module__ = "rasa.mantle.tools.decorator"


    @tool(description="Invisible to Keel.")
    async def hidden():
        pass
    """
    root = write_project({"tools/foreign.py": source})
    tools, _hooks, diagnostics = _load(root, "tools/foreign.py", "keel_test_load.foreign")
    assert tools == ()
    problem = _only(diagnostics)
    assert (problem.code, problem.severity) == ("tool.compat.foreign_decorator", "warning")


def test_project_root_goes_first_on_sys_path(write_project: WriteProject) -> None:
    root = write_project({"tools/empty.py": "x = 1\n"})
    _load(root, "tools/empty.py", "keel_test_load.empty")
    assert sys.path[0] == str(root.resolve())
