"""Keel's import architecture: layers point down, no import cycles, lazy imports are marked.

The contracts live in `.importlinter` at the repository root and are checked by
`lint-imports`; these tests run it on the real tree and on a copy with an upward import
added, and check what the contracts do not see: a cycle between a package's `__init__` and
its own modules, and a function-level import that nobody said why it is lazy.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
KEEL = ROOT / "keel"
CONTRACTS = ROOT / ".importlinter"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# A function-level import of one of these (or of keel itself) must say what it keeps out
# of startup: `# lazy: <what>` on its line or the line above, or, for a module whose every
# function imports what it uses (the command line), one `# lazy imports: <why>` line.
HEAVY = frozenset(
    {
        "sqlalchemy",
        "numpy",
        "openai",
        "anthropic",
        "mcp",
        "httpx",
        "fastapi",
        "uvicorn",
        "tokenizers",
    }
)
LAZY = "# lazy:"
LAZY_MODULE = "# lazy imports:"


def lint_imports(
    *contracts: str, cwd: Path = ROOT, path: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with Keel's contracts (those named, else all); keel found on `path`."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    selected = [arg for c in contracts for arg in ("--contract", c)]
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", *selected, str(CONTRACTS)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every import cycle of `graph`: its strongly connected components (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        imported = graph.find_modules_directly_imported_by(module)
        for other in sorted(imported):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1 or module in imported:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def keel_cycles() -> list[list[str]]:
    """The module-level import cycles in keel/, every import counted (lazy, TYPE_CHECKING)."""
    return import_cycles(grimp.build_graph("keel", cache_dir=None))


def unmarked_lazy_imports(root: Path) -> Iterator[str]:
    """`file:line module` for each function-level import of keel or HEAVY with no marker."""
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if any(line.startswith(LAZY_MODULE) for line in lines):
            continue
        for node in _function_level_imports(ast.parse(text)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:  # a relative import (level > 0) is one of keel's own modules
                names = ["." * node.level + (node.module or "")]
            if not any(n.startswith(".") or n.split(".")[0] in HEAVY | {"keel"} for n in names):
                continue
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            own = lines[node.lineno - 1 : node.end_lineno]
            if not above.startswith(LAZY) and not any(LAZY in line for line in own):
                yield f"{path.relative_to(root.parent)}:{node.lineno} {', '.join(names)}"


def _function_level_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    for function in ast.walk(tree):
        if not isinstance(function, functions):
            continue
        for node in ast.iter_child_nodes(function):
            yield from _imports_not_in(node, functions)


def _imports_not_in(
    node: ast.AST, functions: tuple[type[ast.AST], ...]
) -> Iterator[ast.Import | ast.ImportFrom]:
    # A nested function is walked on its own (ast.walk reaches it): no import twice.
    if isinstance(node, functions):
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    for child in ast.iter_child_nodes(node):
        yield from _imports_not_in(child, functions)


# --- the real tree ---------------------------------------------------------------------


def contract_ids() -> list[str]:
    """The ids of the contracts declared in `.importlinter`."""
    return [
        line.removeprefix("[importlinter:contract:").rstrip("]")
        for line in CONTRACTS.read_text(encoding="utf-8").splitlines()
        if line.startswith("[importlinter:contract:")
    ]


def test_every_contract_holds() -> None:
    declared = contract_ids()
    assert {"layers", "pure-core", "acyclic", "loop-acyclic", "loop-layers"} <= set(declared)

    result = lint_imports()

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(declared)} kept, 0 broken." in result.stdout
    assert "Warnings" not in result.stdout, result.stdout


def test_no_import_cycle_in_keel() -> None:
    cycles = keel_cycles()
    assert cycles == [], "import cycles in keel/:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_every_lazy_import_says_what_it_keeps_out() -> None:
    unmarked = list(unmarked_lazy_imports(KEEL))
    assert unmarked == [], f"function-level imports without `{LAZY} <what>`:\n" + "\n".join(
        unmarked
    )


# --- the checks themselves can fail ----------------------------------------------------


def test_an_upward_import_breaks_the_layers_contract(tmp_path: Path) -> None:
    copy = tmp_path / "keel"
    shutil.copytree(KEEL, copy, ignore=shutil.ignore_patterns("__pycache__"))
    codec = copy / "events" / "codec.py"
    codec.write_text(codec.read_text(encoding="utf-8") + "\nimport keel.loop.engine\n")

    result = lint_imports("layers", cwd=tmp_path, path=tmp_path)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "Keel's layers point down BROKEN" in result.stdout
    assert "keel.events is not allowed to import keel.loop" in result.stdout
    assert "keel.events.codec -> keel.loop.engine" in result.stdout


def test_the_cycle_check_finds_a_cycle_and_a_self_import() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.b", "a.c", "a.d", "e"):
        graph.add_module(module)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.d")
    graph.add_import(importer="a.d", imported="a.b")
    graph.add_import(importer="a.d", imported="e")
    graph.add_import(importer="e", imported="e")

    assert import_cycles(graph) == [["e"], ["a.b", "a.c", "a.d"]]


def test_the_lazy_check_finds_an_unmarked_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text(
        "import json\n"
        "import numpy\n"
        "\n"
        "def f():\n"
        "    import json\n"
        "    import numpy\n"
        "    from keel.loop import engine\n"
        "    # lazy: SQLAlchemy\n"
        "    import sqlalchemy\n"
        "    from . import sibling  # lazy: its tree\n"
        "    from openai import (  # lazy: the SDK\n"
        "        OpenAI,\n"
        "    )\n"
        "    import httpx\n"
        "    def g():\n"
        "        from .. import ids\n"
    )
    (package / "cli.py").write_text("# lazy imports: each command\ndef f():\n    import mcp\n")

    assert list(unmarked_lazy_imports(package)) == [
        "pkg/mod.py:6 numpy",
        "pkg/mod.py:7 keel.loop",
        "pkg/mod.py:14 httpx",
        "pkg/mod.py:16 ..",
    ]
