"""Initial values and prompt rendering."""

from __future__ import annotations

import pytest

from keel.memory.frozen import freeze
from keel.memory.schema import MemoryField, MemorySchema
from keel.memory.values import PII_MARKER, UNSET_MARKER, initial_values, render_for_prompt


def make(namespace: str, name: str, **kw: object) -> MemoryField:
    visibility = "project" if namespace == "project" else "private"
    kw.setdefault("type", "text")
    return MemoryField(namespace=namespace, name=name, visibility=visibility, **kw)  # type: ignore[arg-type]


SCHEMA = MemorySchema.of(
    [make("project", "lang", initial_value="en"), make("project", "user")],
    [
        make("weather", "days", type="int", initial_value=3),
        make("weather", "tags", type="list", initial_value=freeze(["a", ["b"]])),
        make("weather", "opts", type="json", initial_value=freeze({"k": [1]})),
        make("weather", "city"),
    ],
)


def test_initial_values_of_a_skill() -> None:
    assert initial_values(SCHEMA, "weather") == {
        "weather.days": 3,
        "weather.tags": ["a", ["b"]],
        "weather.opts": {"k": [1]},
        "weather.city": None,
    }


def test_initial_values_of_project() -> None:
    assert initial_values(SCHEMA, "project") == {"project.lang": "en", "project.user": None}
    assert initial_values(SCHEMA, "nobody") == {}


def test_initial_values_are_fresh_copies() -> None:
    first = initial_values(SCHEMA, "weather")
    tags = first["weather.tags"]
    assert isinstance(tags, list)
    tags.append("mutated")
    assert initial_values(SCHEMA, "weather")["weather.tags"] == ["a", ["b"]]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("Oslo", "Oslo"),
        ("", ""),
        (3, "3"),
        (2.5, "2.5"),
        (True, "true"),
        (False, "false"),
        (None, UNSET_MARKER),
        (["a", 1], '["a", 1]'),
        ({"k": "ü"}, '{"k": "ü"}'),
        (freeze({"k": ("x",)}), '{"k": ["x"]}'),
        ({"k": object}, str({"k": object})),
    ],
)
def test_render_for_prompt(value: object, shown: str) -> None:
    assert render_for_prompt(make("weather", "x", type="any"), value) == shown


@pytest.mark.parametrize("value", ["555-1234", 0, False, [], {"a": 1}])
def test_pii_values_render_as_set(value: object) -> None:
    assert render_for_prompt(make("project", "phone", pii=True), value) == PII_MARKER == "[set]"


def test_unset_pii_shows_unset() -> None:
    assert render_for_prompt(make("project", "phone", pii=True), None) == UNSET_MARKER
