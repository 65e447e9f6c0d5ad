"""MemoryField and MemorySchema lookups."""

from __future__ import annotations

import pytest

from keel.memory.schema import (
    FIELD_TYPES,
    SYSTEM_KEYS,
    MemoryField,
    MemorySchema,
    is_entry_name,
)


def make(namespace: str, name: str, **kw: object) -> MemoryField:
    visibility = kw.pop("visibility", "project" if namespace == "project" else "public")
    return MemoryField(namespace=namespace, name=name, type="text", visibility=visibility, **kw)  # type: ignore[arg-type]


SCHEMA = MemorySchema.of(
    [make("project", "city"), make("project", "user")],
    [make("weather", "city"), make("weather", "days", visibility="private")],
    [make("billing", "amount")],
)


def test_field_types_are_the_spec_list() -> None:
    assert FIELD_TYPES == {"text", "bool", "int", "float", "list", "json", "categorical", "any"}


def test_key_is_namespace_dot_name() -> None:
    assert make("weather", "city").key == "weather.city"
    assert make("project", "city").is_project
    assert not make("weather", "city").is_project


def test_field_is_frozen_and_hashable() -> None:
    field = make("project", "city")
    with pytest.raises(AttributeError):
        field.name = "other"  # type: ignore[misc]
    assert hash(field) == hash(make("project", "city"))


def test_field_lookup_by_qualified_key() -> None:
    assert SCHEMA.field("weather.days") == make("weather", "days", visibility="private")
    assert SCHEMA.field("weather.nothing") is None
    assert SCHEMA.field("days") is None


def test_resolve_bare_name_prefers_active_skill() -> None:
    resolved = SCHEMA.resolve("city", "weather")
    assert resolved is not None and resolved.key == "weather.city"


def test_resolve_bare_name_falls_back_to_project() -> None:
    resolved = SCHEMA.resolve("user", "weather")
    assert resolved is not None and resolved.key == "project.user"
    other = SCHEMA.resolve("city", "billing")
    assert other is not None and other.key == "project.city"


def test_resolve_without_active_skill_is_project_only() -> None:
    resolved = SCHEMA.resolve("city", None)
    assert resolved is not None and resolved.key == "project.city"
    assert SCHEMA.resolve("days", None) is None


def test_resolve_qualified_names() -> None:
    project = SCHEMA.resolve("project.city", "weather")
    assert project is not None and project.key == "project.city"
    foreign = SCHEMA.resolve("billing.amount", "weather")
    assert foreign is not None and foreign.key == "billing.amount"
    assert SCHEMA.resolve("billing.nothing", "weather") is None


def test_resolve_bare_name_does_not_reach_other_skills() -> None:
    assert SCHEMA.resolve("amount", "weather") is None


def test_fields_of_namespace_in_declaration_order() -> None:
    assert [f.name for f in SCHEMA.fields_of("weather")] == ["city", "days"]
    assert [f.name for f in SCHEMA.fields_of("project")] == ["city", "user"]
    assert SCHEMA.fields_of("nobody") == ()


def test_system_keys_are_known_but_not_declared() -> None:
    assert SYSTEM_KEYS == {
        "system.pending_tool_confirmation",
        "system.__discovered__",
        "system.session_started_metadata",
    }
    for key in SYSTEM_KEYS:
        field = SCHEMA.field(key)
        assert field is not None and field.is_system
        assert key in SCHEMA
    assert {f.key for f in SCHEMA.fields_of("system")} == SYSTEM_KEYS
    assert "system" not in SCHEMA.namespaces
    assert all(not f.is_system for f in SCHEMA.fields)


def test_namespaces_and_contains() -> None:
    assert SCHEMA.namespaces == {"project", "weather", "billing"}
    assert "weather.city" in SCHEMA
    assert "weather.nothing" not in SCHEMA
    assert 3 not in SCHEMA


def test_declaring_system_memory_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="system"):
        MemorySchema.of([make("system", "x")])


def test_duplicate_keys_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="twice"):
        MemorySchema.of([make("project", "x")], [make("project", "x")])


def test_schemas_compare_by_fields() -> None:
    assert MemorySchema.of([make("project", "x")]) == MemorySchema.of([make("project", "x")])
    assert MemorySchema() != MemorySchema.of([make("project", "x")])


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("city", True),
        ("_x1", True),
        ("CamelCase", True),
        ("1st", False),
        ("has space", False),
        ("dash-ed", False),
        ("dot.ted", False),
        ("", False),
        ("ünï", False),
        (5, False),
        (None, False),
    ],
)
def test_entry_names(name: object, ok: bool) -> None:
    assert is_entry_name(name) is ok
