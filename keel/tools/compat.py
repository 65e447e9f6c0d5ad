"""Mantle compatibility shim: Mantle tool modules import Keel's objects unchanged.

`install_compat_shim()` appends a finder to the END of `sys.meta_path` that serves:

    rasa, rasa.mantle, rasa.mantle.tools, rasa.calm_v2, rasa.calm_v2.tools   (packages)
    rasa.mantle.tools.decorator, rasa.calm_v2.tools.decorator  -> tool, ToolContext,
                                                                  InvalidMemoryValue
    rasa.mantle.tools.result, rasa.calm_v2.tools.result        -> ToolResult,
                                                                  InvalidMemoryValue
    rasa.mantle.orchestration.turn_context                     -> current_turn_context

Why the end of `sys.meta_path`: a finder there is asked only after every normal finder has
failed, so it never shadows anything really installed. With no `rasa` installed at all
(the usual Keel setup, where `importlib.util.find_spec("rasa")` finds nothing) it serves
every name above. With a real `rasa-pro` that ships `rasa.mantle`, the real modules win
(and their `@tool` is not Keel's; the loader warns). With a real `rasa` lacking these
subpackages (stable rasa-pro lines have neither `rasa.mantle` nor `rasa.calm_v2`), only the
missing names are served, as children of the real `rasa` package.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from keel.tools.context import ToolContext, current_tool_context
from keel.tools.decorator import tool
from keel.tools.result import InvalidMemoryValue, ToolResult

_DOC = "Served by keel.tools.compat: Mantle names backed by Keel's tool API."
_PACKAGES = frozenset(
    {
        "rasa",
        "rasa.mantle",
        "rasa.mantle.tools",
        "rasa.mantle.orchestration",
        "rasa.calm_v2",
        "rasa.calm_v2.tools",
    }
)
COMPAT_ATTRIBUTE = "__keel_compat__"
"""Set to True on every module the shim serves."""


def _decorator_exports() -> dict[str, object]:
    return {"tool": tool, "ToolContext": ToolContext, "InvalidMemoryValue": InvalidMemoryValue}


def _result_exports() -> dict[str, object]:
    return {"ToolResult": ToolResult, "InvalidMemoryValue": InvalidMemoryValue}


def _tools_package_exports() -> dict[str, object]:
    return {**_decorator_exports(), **_result_exports()}


def _turn_context_exports() -> dict[str, object]:
    return {"current_turn_context": current_tool_context}


_MODULES: dict[str, Callable[[], dict[str, object]]] = {
    **{name: dict for name in _PACKAGES},
    "rasa.mantle.tools": _tools_package_exports,
    "rasa.calm_v2.tools": _tools_package_exports,
    "rasa.mantle.tools.decorator": _decorator_exports,
    "rasa.calm_v2.tools.decorator": _decorator_exports,
    "rasa.mantle.tools.result": _result_exports,
    "rasa.calm_v2.tools.result": _result_exports,
    "rasa.mantle.orchestration.turn_context": _turn_context_exports,
}
SERVED_MODULES: frozenset[str] = frozenset(_MODULES)
"""Every module name the shim can serve."""


class _CompatLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__doc__ = _DOC
        setattr(module, COMPAT_ATTRIBUTE, True)
        for name, value in _MODULES[module.__name__]().items():
            setattr(module, name, value)


class MantleCompatFinder(importlib.abc.MetaPathFinder):
    """Serves the Mantle module names listed in `SERVED_MODULES` (see module docstring)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for a served name; None for everything else."""
        if fullname not in _MODULES:
            return None
        return importlib.util.spec_from_loader(
            fullname, _CompatLoader(), is_package=fullname in _PACKAGES
        )


def install_compat_shim() -> bool:
    """Append the finder to `sys.meta_path` once; True when this call installed it."""
    if any(isinstance(finder, MantleCompatFinder) for finder in sys.meta_path):
        return False
    sys.meta_path.append(MantleCompatFinder())
    return True


def uninstall_compat_shim() -> None:
    """Remove the finder (already imported shim modules stay in `sys.modules`)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, MantleCompatFinder)]


def is_compat_module(module: object) -> bool:
    """True when `module` was served by this shim."""
    return getattr(module, COMPAT_ATTRIBUTE, False) is True
