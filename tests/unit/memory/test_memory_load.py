"""memory.yml parsing: fields, and every diagnostic code at its exact line."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from keel.memory.load import parse_project_memory, parse_skill_memory
from keel.memory.schema import MemoryField
from keel.source.diagnostics import Diagnostic
from keel.source.yaml import load_yaml

ROOT = "memory.yml"
SKILL = "skills/weather/memory.yml"


def project(text: str) -> tuple[tuple[MemoryField, ...], list[Diagnostic]]:
    data, errors = load_yaml(text, ROOT)
    assert errors == []
    return parse_project_memory(data, ROOT)


def skill(text: str, skill_id: str = "weather") -> tuple[tuple[MemoryField, ...], list[Diagnostic]]:
    data, errors = load_yaml(text, SKILL)
    assert errors == []
    return parse_skill_memory(skill_id, data, SKILL)


def codes(diagnostics: list[Diagnostic]) -> list[tuple[str, int | None, str]]:
    return [(d.code, d.line, d.severity) for d in diagnostics]


# --- well-formed files -------------------------------------------------------------


def test_project_memory_fields() -> None:
    fields, diagnostics = project(
        "user_name:\n"
        "  type: text\n"
        "  description: The caller's name\n"
        "  pii: true\n"
        "  seed: true\n"
        "plan:\n"
        "  type: categorical\n"
        "  enum_values: [Basic, Pro]\n"
        "  initial_value: basic\n"
        "  mutable: true\n"
        "tags: {type: list, initial_value: [a, b]}\n"
        "blob: {type: json, anonymization: {strategy: mask}}\n"
    )
    assert diagnostics == []
    user, plan, tags, blob = fields
    assert user == MemoryField(
        namespace="project",
        name="user_name",
        type="text",
        visibility="project",
        description="The caller's name",
        pii=True,
        seed=True,
        file=ROOT,
        line=1,
    )
    assert plan.key == "project.plan"
    assert plan.enum_values == ("Basic", "Pro")
    assert plan.initial_value == "Basic"  # coerced to the declared spelling
    assert plan.mutable and plan.line == 6
    assert tags.initial_value == ("a", "b")  # frozen
    assert tags.line == 11
    assert isinstance(blob.anonymization, MappingProxyType)
    assert dict(blob.anonymization) == {"strategy": "mask"}


def test_skill_memory_public_and_private() -> None:
    fields, diagnostics = skill(
        "schema:\n"
        "  public:\n"
        "    city: {type: text, llm_settable: true, description: City}\n"
        "  private:\n"
        "    days: {type: int, initial_value: '3'}\n"
        "other_tooling_key: whatever\n"
    )
    assert codes(diagnostics) == [("memory.unknown_key", 6, "warning")]
    city, days = fields
    assert (city.key, city.visibility, city.llm_settable, city.line) == (
        "weather.city",
        "public",
        True,
        3,
    )
    assert (days.key, days.visibility, days.initial_value, days.line) == (
        "weather.days",
        "private",
        3,
        5,
    )


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_files_declare_nothing(text: str) -> None:
    assert project(text) == ((), [])
    assert skill(text) == ((), [])


@pytest.mark.parametrize(
    "text",
    ["schema:\n", "schema:\n  public:\n  private:\n"],
)
def test_skill_memory_without_entries(text: str) -> None:
    assert skill(text) == ((), [])


def test_unknown_top_level_keys_of_a_skill_memory_file_warn() -> None:
    fields, diagnostics = skill("notes: hi\nslots:\n  zone: {type: text}\n")
    assert fields == ()
    assert codes(diagnostics) == [
        ("memory.unknown_key", 1, "warning"),
        ("memory.unknown_key", 2, "warning"),
    ]


def test_field_without_attributes_needs_a_type() -> None:
    fields, diagnostics = project("a: {type: bool}\nb:\n")
    assert codes(diagnostics) == [("memory.missing_type", 2, "error")]
    assert [f.type for f in fields] == ["bool", "any"]


# --- diagnostics, one code at a time -------------------------------------------------


def test_unknown_type() -> None:
    fields, diagnostics = project("a:\n  description: x\n  type: colour\n")
    assert codes(diagnostics) == [("memory.unknown_type", 3, "error")]
    assert diagnostics[0].key == "project.a"
    assert fields[0].type == "any"  # still declared, so no follow-up "undeclared" noise


@pytest.mark.parametrize(("legacy", "modern"), [("string", "text"), ("boolean", "bool")])
def test_unknown_type_hints_at_legacy_spelling(legacy: str, modern: str) -> None:
    _, diagnostics = project(f"a:\n  type: {legacy}\n")
    assert codes(diagnostics) == [("memory.unknown_type", 2, "error")]
    assert f"`{modern}`" in diagnostics[0].message


def test_unknown_attribute() -> None:
    _, diagnostics = skill(
        "schema:\n  public:\n    city:\n      type: text\n      llm_setable: true\n"
    )
    assert codes(diagnostics) == [("memory.unknown_attribute", 5, "warning")]
    assert "llm_setable" in diagnostics[0].message


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("llm_settable", '"yes"'),
        ("pii", "1"),
        ("description", "5"),
        ("enum_values", "Small"),
        ("anonymization", "mask"),
        ("llm_settable", ""),
    ],
)
def test_bad_attribute_value(attribute: str, value: str) -> None:
    fields, diagnostics = skill(
        f"schema:\n  public:\n    city:\n      type: text\n      {attribute}: {value}\n"
    )
    assert codes(diagnostics) == [("memory.bad_attribute_value", 5, "error")]
    assert fields[0].llm_settable is False and fields[0].pii is False


def test_bad_enum_item_points_at_the_item() -> None:
    _, diagnostics = project(
        "size:\n  type: categorical\n  enum_values:\n    - small\n    - yes\n    - [x]\n"
    )
    assert codes(diagnostics) == [
        ("memory.bad_attribute_value", 5, "error"),
        ("memory.bad_attribute_value", 6, "error"),
    ]
    assert "quote it" in diagnostics[0].message


def test_numeric_enum_values_become_text() -> None:
    fields, diagnostics = project("n: {type: categorical, enum_values: [1, 2.5, three]}\n")
    assert diagnostics == []
    assert fields[0].enum_values == ("1", "2.5", "three")


def test_duplicate_enum_value_ignoring_case() -> None:
    fields, diagnostics = project(
        "size:\n  type: categorical\n  enum_values:\n    - Small\n    - small\n"
    )
    assert codes(diagnostics) == [("memory.duplicate_enum_value", 5, "warning")]
    assert fields[0].enum_values == ("Small",)


def test_llm_settable_on_project() -> None:
    fields, diagnostics = project("a:\n  type: text\n  llm_settable: true\n")
    assert codes(diagnostics) == [("memory.llm_settable_on_project", 3, "error")]
    assert fields[0].llm_settable is False


def test_llm_settable_false_on_project_is_harmless() -> None:
    assert project("a:\n  type: text\n  llm_settable: false\n")[1] == []


def test_mutable_on_skill() -> None:
    fields, diagnostics = skill(
        "schema:\n  private:\n    a:\n      type: int\n      mutable: true\n"
    )
    assert codes(diagnostics) == [("memory.mutable_on_skill", 5, "error")]
    assert fields[0].mutable is False


def test_seed_on_skill() -> None:
    fields, diagnostics = skill("schema:\n  public:\n    a:\n      seed: true\n      type: int\n")
    assert codes(diagnostics) == [("memory.seed_on_skill", 4, "error")]
    assert fields[0].seed is False


@pytest.mark.parametrize("enum", ["", "  enum_values: []\n"])
def test_categorical_without_values(enum: str) -> None:
    _, diagnostics = project(f"a:\n  type: categorical\n{enum}  initial_value: x\n")
    # the initial value is not reported again: there is nothing it could match
    assert codes(diagnostics) == [("memory.categorical_without_values", 2, "error")]


def test_enum_values_on_non_categorical_is_a_warning() -> None:
    fields, diagnostics = project("a:\n  type: text\n  enum_values: [x, y]\n")
    assert codes(diagnostics) == [("memory.enum_values_on_non_categorical", 3, "warning")]
    assert fields[0].type == "text"


@pytest.mark.parametrize(
    ("attrs", "line"),
    [
        ("  type: int\n  initial_value: many\n", 3),
        ("  type: categorical\n  enum_values: [a, b]\n  initial_value: c\n", 4),
        ("  type: text\n  initial_value: 2024-01-31\n", 3),
        ("  type: bool\n  initial_value: maybe\n", 3),
        ("  type: list\n  initial_value: {a: 1}\n", 3),
    ],
)
def test_bad_initial_value(attrs: str, line: int) -> None:
    fields, diagnostics = project("x:\n" + attrs)
    assert codes(diagnostics) == [("memory.bad_initial_value", line, "error")]
    assert fields[0].initial_value is None


@pytest.mark.parametrize("yaml_key", ["'has space'", "1st", "dash-ed", "42", "true", "ünï"])
def test_bad_entry_name(yaml_key: str) -> None:
    fields, diagnostics = project(f"ok: {{type: text}}\n{yaml_key}: {{type: text}}\n")
    assert codes(diagnostics) == [("memory.bad_entry_name", 2, "error")]
    assert [f.name for f in fields] == ["ok"]


@pytest.mark.parametrize("reserved", ["project", "system"])
def test_reserved_namespace(reserved: str) -> None:
    fields, diagnostics = skill("schema:\n  public:\n    a: {type: text}\n", skill_id=reserved)
    assert codes(diagnostics) == [("memory.reserved_namespace", None, "error")]
    assert fields == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("- a\n- b\n", 1),
        ("just text\n", 1),
        ("\n\na: text\n", 3),
        ("a:\n  - type\n  - text\n", 1),
    ],
)
def test_project_not_a_mapping(text: str, line: int) -> None:
    fields, diagnostics = project(text)
    assert codes(diagnostics) == [("memory.not_a_mapping", line, "error")]
    assert fields == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("- schema\n", 1),
        ("schema: [a]\n", 1),
        ("schema:\n  public: [a]\n", 2),
        ("schema:\n  private:\n    a: text\n", 3),
    ],
)
def test_skill_not_a_mapping(text: str, line: int) -> None:
    fields, diagnostics = skill(text)
    assert codes(diagnostics) == [("memory.not_a_mapping", line, "error")]
    assert fields == ()


def test_legacy_memory_key_alone_is_an_error() -> None:
    fields, diagnostics = skill("# old Maestro style\nmemory:\n  city: {type: string}\n")
    assert codes(diagnostics) == [("memory.legacy_memory_key", 2, "error")]
    assert fields == ()


def test_legacy_memory_key_next_to_schema_is_a_warning() -> None:
    fields, diagnostics = skill(
        "schema:\n  public:\n    city: {type: text}\nmemory:\n  x: {type: text}\n"
    )
    assert codes(diagnostics) == [("memory.legacy_memory_key", 4, "warning")]
    assert [f.key for f in fields] == ["weather.city"]


def test_access_block_in_skill_memory_warns() -> None:
    fields, diagnostics = skill(
        "schema:\n  public:\n    a: {type: text}\naccess:\n  deny_read: [a]\n  deny_write: [a]\n"
    )
    assert codes(diagnostics) == [("memory.access_block", 4, "warning")]
    assert len(fields) == 1


def test_access_block_on_a_field_warns() -> None:
    fields, diagnostics = skill(
        "schema:\n  public:\n    a:\n      type: text\n      access: {deny_write: [tool]}\n"
    )
    assert codes(diagnostics) == [("memory.access_block", 5, "warning")]
    assert fields[0].key == "weather.a"


def test_access_block_in_root_memory_warns() -> None:
    fields, diagnostics = project("a: {type: text}\naccess:\n  deny_read: [a]\n")
    assert codes(diagnostics) == [("memory.access_block", 2, "warning")]
    assert [f.name for f in fields] == ["a"]


def test_root_field_named_access_is_a_field() -> None:
    fields, diagnostics = project("access: {type: bool}\n")
    assert diagnostics == []
    assert fields[0].key == "project.access"


def test_access_block_shape_is_checked() -> None:
    _, diagnostics = skill("access:\n  deny_read: a\n  allow: [b]\n")
    assert codes(diagnostics) == [
        ("memory.access_block", 1, "warning"),
        ("memory.bad_attribute_value", 2, "error"),
        ("memory.unknown_attribute", 3, "warning"),
    ]
    _, diagnostics = skill("access:\n")
    assert codes(diagnostics) == [("memory.access_block", 1, "warning")]
    _, diagnostics = skill("access: all\n")
    assert codes(diagnostics) == [
        ("memory.access_block", 1, "warning"),
        ("memory.bad_attribute_value", 1, "error"),
    ]


def test_unknown_section_under_schema() -> None:
    fields, diagnostics = skill("schema:\n  city: {type: text}\n  public:\n    days: {type: int}\n")
    assert codes(diagnostics) == [("memory.unknown_section", 2, "error")]
    assert [f.name for f in fields] == ["days"]


def test_duplicate_entry_across_sections() -> None:
    fields, diagnostics = skill(
        "schema:\n  public:\n    city: {type: text}\n  private:\n    city: {type: text}\n"
    )
    assert codes(diagnostics) == [("memory.duplicate_entry", 5, "error")]
    assert "line 3" in diagnostics[0].message
    assert [f.visibility for f in fields] == ["public"]


@pytest.mark.parametrize("wrapper", ["schema", "public"])
def test_skill_wrapper_in_root_memory(wrapper: str) -> None:
    fields, diagnostics = project(f"x: {{type: int}}\n{wrapper}:\n  a: {{type: text}}\n")
    assert codes(diagnostics) == [("memory.project_wrapper", 2, "error")]
    assert [f.name for f in fields] == ["x"]


def test_several_findings_in_one_field_all_reported() -> None:
    _, diagnostics = project(
        "a:\n  type: int\n  llm_settable: true\n  colour: red\n  initial_value: x\n"
    )
    assert sorted(codes(diagnostics)) == [
        ("memory.bad_initial_value", 5, "error"),
        ("memory.llm_settable_on_project", 3, "error"),
        ("memory.unknown_attribute", 4, "warning"),
    ]


def test_diagnostics_carry_file_and_key() -> None:
    _, diagnostics = skill("schema:\n  public:\n    a: {type: nope}\n")
    (finding,) = diagnostics
    assert finding.file == SKILL
    assert finding.key == "weather.a"
    assert finding.render().startswith("skills/weather/memory.yml:3: memory.unknown_type:")


def test_enum_values_on_int_are_kept_and_checked() -> None:
    fields, diagnostics = project("a:\n  type: int\n  enum_values: [1, 2]\n  initial_value: 2\n")
    assert diagnostics == []
    assert fields[0].enum_values == ("1", "2")
    _, diagnostics = project("a:\n  type: int\n  enum_values: [1, 2]\n  initial_value: 3\n")
    assert codes(diagnostics) == [("memory.bad_initial_value", 4, "error")]
