"""Post-write hook names and train-time checks (spec §3.4, §1.5)."""

from __future__ import annotations

import pytest

from keel.memory.hooks import check_hooks, entry_of_hook, hook_name
from keel.memory.schema import MemoryField, MemorySchema

TOOLS = "skills/weather/tools.py"


def make(namespace: str, name: str, **kw: object) -> MemoryField:
    visibility = "project" if namespace == "project" else "public"
    return MemoryField(namespace=namespace, name=name, type="text", visibility=visibility, **kw)  # type: ignore[arg-type]


SCHEMA = MemorySchema.of(
    [make("project", "account")],
    [
        make("weather", "city", llm_settable=True),
        make("weather", "days"),
        make("weather", "unit"),
    ],
    [make("billing", "amount", llm_settable=True)],
)


def test_hook_name() -> None:
    assert hook_name("city") == "run_after_setting_city"


@pytest.mark.parametrize(
    ("function", "entry"),
    [
        ("run_after_setting_city", "city"),
        ("run_after_setting__x", "_x"),
        ("run_after_setting_run_after_setting_x", "run_after_setting_x"),
        ("run_after_setting_", None),
        ("run_after_setting", None),
        ("set_city", None),  # legacy Maestro name: not a hook
        ("lookup_city", None),
        ("Run_after_setting_city", None),
    ],
)
def test_entry_of_hook(function: str, entry: str | None) -> None:
    assert entry_of_hook(function) == entry


def test_hooks_on_writable_fields_pass() -> None:
    found = check_hooks(SCHEMA, "weather", {"city": 3, "days": 9}, frozenset({"days"}), file=TOOLS)
    assert found == []


def test_hook_on_collect_owned_qualified_key_passes() -> None:
    owned = frozenset({"weather.days"})
    assert check_hooks(SCHEMA, "weather", {"days": 4}, owned, file=TOOLS) == []


def test_unknown_field() -> None:
    found = check_hooks(SCHEMA, "weather", {"nothing": 12}, frozenset(), file=TOOLS)
    assert [(d.code, d.file, d.line, d.key) for d in found] == [
        ("memory.hook.unknown_field", TOOLS, 12, "run_after_setting_nothing")
    ]


def test_hook_on_another_skills_field_is_unknown() -> None:
    found = check_hooks(SCHEMA, "weather", {"amount": 5}, frozenset(), file=TOOLS)
    assert [(d.code, d.line) for d in found] == [("memory.hook.unknown_field", 5)]


def test_field_not_writable() -> None:
    found = check_hooks(SCHEMA, "weather", {"unit": 7, "city": 2}, frozenset({"days"}), file=TOOLS)
    assert [(d.code, d.line, d.severity) for d in found] == [
        ("memory.hook.field_not_writable", 7, "error")
    ]
    assert "weather.unit" in found[0].message


def test_hook_on_project_field_is_not_writable() -> None:
    found = check_hooks(SCHEMA, "weather", {"account": None}, frozenset({"account"}), file=TOOLS)
    assert [(d.code, d.line) for d in found] == [("memory.hook.field_not_writable", None)]
    assert "project.account" in found[0].message
