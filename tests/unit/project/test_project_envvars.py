"""`${VAR}` expansion, secrets and freezing."""

from __future__ import annotations

from types import MappingProxyType

from _project_helpers import yaml_data

from keel.project.envvars import Expander, Secret, expand_text, freeze


def test_expand_text_replaces_set_and_records_unset() -> None:
    text, referenced, unset = expand_text("${A}-${B}-${A}", {"A": "x"})
    assert text == "x--x"
    assert referenced == ("A", "B", "A")
    assert unset == ("B",)


def test_only_braced_names_are_expanded() -> None:
    text, referenced, _ = expand_text("$A ${1A} ${A-default} $${A}", {"A": "x"})
    assert text == "$A ${1A} ${A-default} $x"
    assert referenced == ("A",)


def test_secret_hides_value_and_reports_state() -> None:
    secret = Secret(value="hunter2", env_vars=("PW",))
    assert "hunter2" not in repr(secret) and "hunter2" not in str(secret)
    assert secret.reveal() == "hunter2"
    assert secret.is_set and not secret.literal
    assert Secret(value="x").literal
    assert not Secret(value="", env_vars=("PW",), unset=("PW",)).is_set


def test_expander_tree_keeps_lines_and_paths() -> None:
    data = yaml_data("a:\n  b: ${X}\n  c:\n    - ${Y}\n    - 3\n")
    x = Expander("f.yml", {"X": "1"})
    tree = x.tree(data, line=None, key="root")
    assert isinstance(tree, MappingProxyType)
    assert tree["a"]["b"] == "1"
    assert tree["a"]["c"] == ("", 3)
    (unset,) = x.unset
    assert (unset.name, unset.file, unset.line, unset.key) == ("Y", "f.yml", 4, "root.a.c[0]")


def test_expander_variable_reads_a_named_variable() -> None:
    x = Expander("f.yml", {"K": "v"})
    assert x.variable("K", line=3, key="k").reveal() == "v"
    missing = x.variable("M", line=4, key="m")
    assert not missing.is_set and missing.env_vars == ("M",)
    assert [(u.name, u.line) for u in x.unset] == [("M", 4)]


def test_freeze_makes_read_only_copies() -> None:
    frozen = freeze({"a": [1, {"b": 2}]})
    assert frozen == {"a": (1, {"b": 2})}
    assert isinstance(frozen, MappingProxyType)
    assert isinstance(frozen["a"][1], MappingProxyType)
