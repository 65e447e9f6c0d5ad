"""Grammar of the condition language: literals, references, precedence, chaining."""

from __future__ import annotations

import dataclasses

import pytest

from keel.conditions import (
    And,
    Compare,
    Comparison,
    Condition,
    Constant,
    MemoryRef,
    Node,
    Not,
    Or,
    Reference,
    parse_condition,
    walk,
)


def tree(source: str) -> Node:
    return parse_condition(source).tree


def shape(node: Node) -> object:
    """A column-free rendering of a tree, so expectations stay readable."""
    if isinstance(node, Constant):
        return node.value
    if isinstance(node, MemoryRef):
        return node.reference.key
    if isinstance(node, Not):
        return ("not", shape(node.operand))
    if isinstance(node, And | Or):
        return ("and" if isinstance(node, And) else "or", *(shape(o) for o in node.operands))
    links = [part for link in node.rest for part in (link.op, shape(link.right))]
    return ("cmp", shape(node.first), *links)


def test_reference_key_and_fields() -> None:
    ref = Reference(namespace="greet", entry="name")
    assert ref.key == "greet.name"
    assert ref == Reference(namespace="greet", entry="name")
    with pytest.raises(AttributeError):
        ref.entry = "other"  # type: ignore[misc]


def test_condition_records_source_tree_and_references() -> None:
    source = "  session.project.verified and session.greet.count > 2 "
    condition = parse_condition(source)
    assert isinstance(condition, Condition)
    assert condition.source == source
    assert condition.references == frozenset(
        {
            Reference(namespace="project", entry="verified"),
            Reference(namespace="greet", entry="count"),
        }
    )
    assert isinstance(condition.tree, And)


def test_bare_reference_is_a_memory_read_with_its_column() -> None:
    node = tree("  session.system.channel")
    assert node == MemoryRef(reference=Reference(namespace="system", entry="channel"), column=2)


def test_reference_segments_may_be_spaced_or_split_across_lines() -> None:
    assert shape(tree("session .\n a_1 . _b2")) == "a_1._b2"


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("True", True),
        ("False", False),
        ("None", None),
        ("0", 0),
        ("42", 42),
        ("1_000", 1000),
        ("-7", -7),
        ("- 7", -7),
        ("3.25", 3.25),
        ("-0.5", -0.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("2.5E-2", 0.025),
        ("1.e2", 100.0),
        ("'single'", "single"),
        ('"double"', "double"),
        ("''", ""),
        ("'it\\'s'", "it's"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("'back\\\\slash'", "back\\slash"),
        ("'mixed \\\" quote'", 'mixed " quote'),
        ('"it\'s"', "it's"),
        ("'caf\u00e9 \t tab'", "caf\u00e9 \t tab"),
        ("'not and or True'", "not and or True"),
    ],
)
def test_literals(source: str, value: object) -> None:
    node = tree(source)
    assert isinstance(node, Constant)
    assert node.value == value
    assert type(node.value) is type(value)


def test_integer_and_float_types_are_kept_apart() -> None:
    assert type(shape(tree("1"))) is int
    assert type(shape(tree("1.0"))) is float
    negative_zero = tree("-0.0")
    assert isinstance(negative_zero, Constant)
    assert str(negative_zero.value) == "-0.0"


def test_not_binds_looser_than_comparison() -> None:
    assert shape(tree("not session.a.b == 1")) == ("not", ("cmp", "a.b", "==", 1))


def test_and_binds_tighter_than_or() -> None:
    assert shape(tree("session.a.x or session.a.y and session.a.z")) == (
        "or",
        "a.x",
        ("and", "a.y", "a.z"),
    )
    assert shape(tree("session.a.x and session.a.y or session.a.z")) == (
        "or",
        ("and", "a.x", "a.y"),
        "a.z",
    )


def test_not_binds_tighter_than_and() -> None:
    assert shape(tree("not session.a.x and session.a.y")) == ("and", ("not", "a.x"), "a.y")


def test_not_can_repeat() -> None:
    assert shape(tree("not not session.a.x")) == ("not", ("not", "a.x"))


def test_same_operator_runs_flatten() -> None:
    assert shape(tree("1 or 2 or 3")) == ("or", 1, 2, 3)
    assert shape(tree("1 and 2 and 3")) == ("and", 1, 2, 3)


def test_parentheses_override_precedence() -> None:
    assert shape(tree("(session.a.x or session.a.y) and session.a.z")) == (
        "and",
        ("or", "a.x", "a.y"),
        "a.z",
    )
    assert shape(tree("not (session.a.x and session.a.y)")) == ("not", ("and", "a.x", "a.y"))


def test_redundant_parentheses_vanish() -> None:
    assert tree("((session.a.x))") == MemoryRef(
        reference=Reference(namespace="a", entry="x"), column=2
    )


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_every_comparison_operator(op: str) -> None:
    assert shape(tree(f"session.a.b {op} 3")) == ("cmp", "a.b", op, 3)


def test_comparisons_chain() -> None:
    source = "session.a.x < session.a.y <= 10"
    node = tree(source)
    assert isinstance(node, Compare)
    y = MemoryRef(reference=Reference(namespace="a", entry="y"), column=source.index("session.a.y"))
    assert node.first == MemoryRef(reference=Reference(namespace="a", entry="x"), column=0)
    assert node.rest == (
        Comparison(op="<", right=y),
        Comparison(op="<=", right=Constant(value=10, column=source.index("10"))),
    )


def test_parenthesised_comparison_does_not_chain() -> None:
    assert shape(tree("(session.a.x < 3) == True")) == ("cmp", ("cmp", "a.x", "<", 3), "==", True)


def test_boolean_expression_can_be_a_comparison_operand() -> None:
    assert shape(tree("(session.a.x or 5) > 3")) == ("cmp", ("or", "a.x", 5), ">", 3)


def test_whitespace_and_newlines_are_insignificant() -> None:
    folded = "session.a.x == 1\n  and\tsession.a.y\r\n!= 'v'\n"
    assert shape(tree(folded)) == ("and", ("cmp", "a.x", "==", 1), ("cmp", "a.y", "!=", "v"))


def test_operators_need_no_spaces() -> None:
    assert shape(tree("(session.a.x>=-1)and(session.a.y!='q')")) == (
        "and",
        ("cmp", "a.x", ">=", -1),
        ("cmp", "a.y", "!=", "q"),
    )


def test_node_columns_point_into_the_source() -> None:
    source = "session.a.x == 'v' or not session.b.y"
    for node in walk(tree(source)):
        assert 0 <= node.column < len(source)
    node = tree(source)
    assert isinstance(node, Or)
    assert isinstance(node.operands[1], Not)
    assert node.operands[1].column == source.index("not")


def test_references_collects_every_distinct_reference() -> None:
    condition = parse_condition("session.a.x == session.a.x or (session.b.y and not session.c.z)")
    assert {ref.key for ref in condition.references} == {"a.x", "b.y", "c.z"}


def test_keywords_are_allowed_as_reference_segments() -> None:
    assert shape(tree("session.project.not")) == "project.not"


def test_parsed_conditions_are_hashable_values() -> None:
    assert parse_condition("session.a.x > 1") == parse_condition("session.a.x > 1")
    assert hash(parse_condition("session.a.x > 1")) == hash(parse_condition("session.a.x > 1"))


def test_condition_can_be_built_directly_and_replaced() -> None:
    parsed = parse_condition("session.a.x == 1")
    built = Condition(source=parsed.source, tree=parsed.tree, references=parsed.references)
    assert built == parsed
    changed = dataclasses.replace(parsed, source="session.a.x==1")
    assert changed.tree == parsed.tree
    assert changed != parsed


def test_condition_refuses_a_tree_reading_unlisted_references() -> None:
    parsed = parse_condition("session.a.x == session.b.y")
    with pytest.raises(ValueError, match=r"b\.y"):
        Condition(
            source=parsed.source,
            tree=parsed.tree,
            references=frozenset({Reference(namespace="a", entry="x")}),
        )
