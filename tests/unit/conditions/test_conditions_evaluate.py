"""Evaluation: Python semantics and truthiness (spec §4.2), failing closed (spec §4.3)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest

from keel.conditions import (
    MemoryReader,
    Outcome,
    Reference,
    Unreadable,
    evaluate,
    holds,
    parse_condition,
    read_from_mapping,
)

TRUE, FALSE, CLOSED = Outcome.TRUE, Outcome.FALSE, Outcome.CLOSED


def run(source: str, values: Mapping[str, object] | None = None, *, hidden: str = "") -> Outcome:
    """Evaluate `source` over `values`; keys listed in `hidden` are unreadable."""
    closed = set(hidden.split())
    reader = read_from_mapping(values or {}, lambda ref: ref.key not in closed)
    return evaluate(parse_condition(source), reader)


def test_outcome_has_three_members() -> None:
    assert [o.name for o in Outcome] == ["TRUE", "FALSE", "CLOSED"]


@pytest.mark.parametrize("value", [None, False, 0, 0.0, "", [], {}, ()])
def test_falsy_values_fail_a_presence_test(value: object) -> None:
    assert run("session.a.x", {"a.x": value}) is FALSE


@pytest.mark.parametrize("value", [True, 1, -1, 0.5, "no", "False", [0], [None], {"k": 0}])
def test_truthy_values_pass_a_presence_test(value: object) -> None:
    assert run("session.a.x", {"a.x": value}) is TRUE


def test_unset_reads_as_none() -> None:
    assert run("session.a.x") is FALSE
    assert run("session.a.x == None") is TRUE
    assert run("session.a.x != None") is FALSE


def test_numeric_zero_needs_an_explicit_none_comparison() -> None:
    memory = {"a.count": 0}
    assert run("session.a.count", memory) is FALSE
    assert run("session.a.count != None", memory) is TRUE
    assert run("session.a.count >= 0", memory) is TRUE


def test_booleans_have_three_states() -> None:
    for value, expected in [(True, TRUE), (False, FALSE), (None, FALSE)]:
        assert run("session.a.flag == True", {"a.flag": value}) is expected
    for value, expected in [(True, FALSE), (False, TRUE), (None, FALSE)]:
        assert run("session.a.flag == False", {"a.flag": value}) is expected
    assert run("not session.a.flag", {}) is TRUE
    assert run("not session.a.flag", {"a.flag": False}) is TRUE


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1 == 1.0", TRUE),
        ("True == 1", TRUE),
        ("0 == False", TRUE),
        ("'a' < 'b'", TRUE),
        ("'B' < 'a'", TRUE),
        ("'1' == 1", FALSE),
        ("None == None", TRUE),
        ("None == 0", FALSE),
        ("-1 < 0 < 1", TRUE),
        ("1 < 2 > 0", TRUE),
        ("3 > 2 > 1", TRUE),
        ("1 < 3 < 2", FALSE),
        ("not 1 == 2", TRUE),
        ("1 == 2 or 2 == 2 and not False", TRUE),
        ("(1 == 2 or 2 == 2) and False", FALSE),
        ("'x'", TRUE),
        ("''", FALSE),
        ("0.0", FALSE),
        ("-0.0", FALSE),
        ("None", FALSE),
        ("(1 < 2) == True", TRUE),
        ("(1 < 2) < 2", TRUE),
    ],
)
def test_python_semantics_on_literals(source: str, expected: Outcome) -> None:
    assert run(source) is expected


def test_chained_comparison_over_memory() -> None:
    source = "1 <= session.a.n < 10"
    assert run(source, {"a.n": 1}) is TRUE
    assert run(source, {"a.n": 9.5}) is TRUE
    assert run(source, {"a.n": 10}) is FALSE
    assert run(source, {"a.n": 0}) is FALSE


def test_chain_stops_at_the_first_false_link_like_python() -> None:
    # Python never evaluates `2 < None` here, so there is no TypeError.
    assert run("session.a.n > 2 < None", {"a.n": 1}) is FALSE
    assert run("session.a.n > 2 < None", {"a.n": 3}) is CLOSED


def test_and_or_return_operands_like_python() -> None:
    assert run("(session.a.x or 5) > 3", {}) is TRUE
    assert run("(session.a.x or 5) > 3", {"a.x": 1}) is FALSE
    assert run("(session.a.x and 5) == 0", {"a.x": 0}) is TRUE
    assert run("(session.a.x and 5) == 5", {"a.x": "yes"}) is TRUE
    assert run("(session.a.x or session.a.y) == 'fallback'", {"a.y": "fallback"}) is TRUE


def test_short_circuit_skips_a_comparison_that_would_raise() -> None:
    assert run("session.a.x or session.a.y < 3", {"a.x": True}) is TRUE
    assert run("session.a.x or session.a.y < 3", {"a.x": False}) is CLOSED
    assert run("session.a.x and session.a.y < 3", {"a.x": 0}) is FALSE


@pytest.mark.parametrize(
    ("source", "values"),
    [
        ("session.a.x < 3", {}),
        ("session.a.x > 'a'", {"a.x": 1}),
        ("session.a.x < 1", {"a.x": [1]}),
        ("session.a.x < session.a.y", {"a.x": {"k": 1}, "a.y": {"k": 2}}),
        ("session.a.x <= session.a.y", {"a.x": [1, "a"], "a.y": [1, 2]}),
        ("1 < session.a.x < 10", {"a.x": None}),
    ],
)
def test_type_errors_close_the_condition(source: str, values: Mapping[str, object]) -> None:
    assert run(source, values) is CLOSED


def test_lists_and_dicts_compare_like_python() -> None:
    memory = {"a.l": [1, 2], "a.m": [1, 3], "a.d": {"k": [1]}, "a.e": {"k": [1]}}
    assert run("session.a.l == session.a.l", memory) is TRUE
    assert run("session.a.l != session.a.m", memory) is TRUE
    assert run("session.a.l < session.a.m", memory) is TRUE
    assert run("session.a.d == session.a.e", memory) is TRUE
    assert run("session.a.d != session.a.l", memory) is TRUE
    assert run("session.a.l == 'x'", memory) is FALSE


def test_nan_is_unequal_to_itself() -> None:
    assert run("session.a.x == session.a.x", {"a.x": math.nan}) is FALSE
    assert run("session.a.x != session.a.x", {"a.x": math.nan}) is TRUE


@pytest.mark.parametrize(
    "source",
    [
        "session.x.y",
        "not session.x.y",
        "True or session.x.y",
        "session.x.y or True",
        "False and session.x.y",
        "session.x.y == None",
        "session.x.y != None",
        "1 > 2 < session.x.y",
        "session.a.ok and (session.b.ok or session.x.y)",
    ],
)
def test_an_unreadable_reference_closes_the_condition_whatever_the_logic(source: str) -> None:
    memory = {"a.ok": True, "b.ok": True, "x.y": True}
    assert run(source, memory, hidden="x.y") is CLOSED
    assert run(source, memory) is not CLOSED


def test_every_reference_is_read_even_when_python_would_short_circuit() -> None:
    seen: list[str] = []

    def reader(ref: Reference) -> object:
        seen.append(ref.key)
        return True

    condition = parse_condition("session.b.y or session.a.x or session.b.y or session.a.b")
    assert evaluate(condition, reader) is TRUE
    # Each once, in a stable order (sorted), whatever the order in the text.
    assert seen == ["a.b", "a.x", "b.y"]


@pytest.mark.parametrize(
    "error", [RuntimeError("db down"), KeyError("k"), ValueError(), Unreadable()]
)
def test_any_reader_exception_closes_the_condition(error: Exception) -> None:
    def reader(ref: Reference) -> object:
        raise error

    assert evaluate(parse_condition("True or session.a.x"), reader) is CLOSED


class _Hostile:
    """A value whose every operation raises, as a tool might store by mistake."""

    def __bool__(self) -> bool:
        raise RuntimeError("no truth")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no equality")

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize(
    "source", ["session.a.h", "not session.a.h", "session.a.h == 1", "session.a.h or True"]
)
def test_values_that_raise_close_the_condition(source: str) -> None:
    assert run(source, {"a.h": _Hostile()}) is CLOSED


def test_values_that_raise_are_harmless_when_python_never_touches_them() -> None:
    assert run("False and session.a.h", {"a.h": _Hostile()}) is FALSE


def test_holds_is_true_only_for_outcome_true() -> None:
    condition = parse_condition("session.a.x > 1")
    assert holds(condition, read_from_mapping({"a.x": 2})) is True
    assert holds(condition, read_from_mapping({"a.x": 1})) is False
    assert holds(condition, read_from_mapping({})) is False  # None > 1 -> CLOSED
    hidden = read_from_mapping({"a.x": 2}, lambda ref: False)
    assert holds(condition, hidden) is False


def test_read_from_mapping_reads_keys_and_honours_readable() -> None:
    ref = Reference(namespace="greet", entry="name")
    other = Reference(namespace="billing", entry="card")
    reader: MemoryReader = read_from_mapping(
        {"greet.name": "Ada", "billing.card": "4242"}, lambda r: r.namespace != "billing"
    )
    assert reader(ref) == "Ada"
    assert reader(Reference(namespace="greet", entry="missing")) is None
    with pytest.raises(Unreadable) as caught:
        reader(other)
    assert caught.value.reference == other
    assert "billing.card" in str(caught.value)


def test_unreadable_without_a_reference_still_describes_itself() -> None:
    assert "memory reference" in str(Unreadable())
    assert Unreadable().reference is None
    assert Unreadable(Reference(namespace="p", entry="q"), "private").reason == "private"


def test_read_from_mapping_without_predicate_reads_everything() -> None:
    reader = read_from_mapping({"project.x": 0})
    assert reader(Reference(namespace="project", entry="x")) == 0
    assert reader(Reference(namespace="system", entry="y")) is None


def test_evaluate_uses_the_current_reader_each_time() -> None:
    condition = parse_condition("session.project.tier == 'gold'")
    assert evaluate(condition, read_from_mapping({"project.tier": "gold"})) is TRUE
    assert evaluate(condition, read_from_mapping({"project.tier": "silver"})) is FALSE
