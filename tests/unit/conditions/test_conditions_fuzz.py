"""Property tests: generated conditions evaluated over generated memory.

Generated expression trees are rendered to text with random spacing and redundant
parentheses, parsed, and evaluated. With an unreadable reference the outcome must be
CLOSED; otherwise it is checked two ways: against a small tree evaluator written here, and
against CPython evaluating the same generated text (a test oracle on test-made text only;
the condition package itself never hands text to Python).
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, TypeAlias

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.conditions import (
    Outcome,
    Reference,
    Unreadable,
    evaluate,
    parse_condition,
)

FUZZ = settings(max_examples=400, deadline=None, derandomize=True, database=None)

# -- generated trees -----------------------------------------------------------------------

NAMESPACES = ("project", "greet", "system")
ENTRIES = ("a", "b", "n")
REFS = tuple(Reference(namespace=ns, entry=e) for ns in NAMESPACES for e in ENTRIES)
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Lit:
    value: object


@dataclass(frozen=True)
class Ref:
    ref: Reference


@dataclass(frozen=True)
class Neg:
    operand: Expr


@dataclass(frozen=True)
class Junction:
    word: str  # "and" | "or"
    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class Chain:
    first: Expr
    links: tuple[tuple[str, Expr], ...]


Expr: TypeAlias = Lit | Ref | Neg | Junction | Chain

STRING_CHARS = "ab Z'\"\\\t\u00e9\u4e2d01-.,"
# Mostly small, colliding values (so comparisons are often equal or ordered either way),
# some arbitrary ones; heavy strategies here would starve the tree shapes.
COMMON = (None, True, False, 0, 1, -1, 2, 0.0, -0.0, 1.0, 2.5, "", "a", "b", "1")
scalars = st.one_of(
    st.sampled_from(COMMON),
    st.integers(-3, 3),
    st.integers(-3, 3),  # twice: small numbers keep ordering comparisons meaningful
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=STRING_CHARS, max_size=3),
)
refs = st.sampled_from(REFS).map(Ref)
leaves: st.SearchStrategy[Expr] = st.one_of(refs, st.builds(Lit, scalars))
junction_words = st.sampled_from(["and", "or"])


def expressions_of(depth: int, leaves: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    """Trees at most `depth` operators deep; explicit depth keeps the shapes well mixed."""
    if depth == 0:
        return leaves
    children = expressions_of(depth - 1, leaves)
    links = st.lists(st.tuples(st.sampled_from(list(OPS)), children), min_size=1, max_size=2)
    operands = st.lists(children, min_size=2, max_size=3).map(tuple)
    return st.one_of(
        leaves,
        st.builds(Chain, children, links.map(tuple)),
        st.builds(Chain, children, links.map(tuple)),
        st.builds(Junction, junction_words, operands),
        # builds(), not children.map(Neg): a mapped one_of is flattened into its branches,
        # which would make `not` swamp every other shape.
        st.builds(Neg, children),
    )


expressions = expressions_of(3, leaves)
# Numbers only: every comparison can be made, so precedence and chaining decide the result.
small_numbers = st.one_of(st.integers(-3, 3), st.sampled_from((-1.5, 0.0, -0.0, 0.5, 2.0)))
numeric_expressions = expressions_of(3, st.one_of(refs, st.builds(Lit, small_numbers)))

memory_values = st.recursive(
    st.one_of(st.sampled_from((*COMMON, math.nan, math.inf)), st.integers(-3, 3), st.floats()),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=4,
)
MISSING = object()
UNREADABLE = object()
# One slot per reference: 10% unreadable, 10% unset, otherwise a value.
slots = st.tuples(st.integers(0, 9), memory_values).map(
    lambda pair: UNREADABLE if pair[0] == 0 else MISSING if pair[0] == 1 else pair[1]
)


def memories_of(slots: st.SearchStrategy[object]) -> st.SearchStrategy[dict[Reference, object]]:
    return st.tuples(*(slots for _ in REFS)).map(
        lambda values: {ref: v for ref, v in zip(REFS, values, strict=True) if v is not MISSING}
    )


memories = memories_of(slots)
numeric_memories = memories_of(small_numbers)

# -- rendering -----------------------------------------------------------------------------

PRECEDENCE = {Junction: 1, Neg: 3, Chain: 4, Lit: 5, Ref: 5}


def precedence(expr: Expr) -> int:
    if isinstance(expr, Junction):
        return 1 if expr.word == "or" else 2
    return PRECEDENCE[type(expr)]


def render_literal(value: object, rnd: random.Random) -> str:
    if isinstance(value, str):
        quote = rnd.choice("'\"")
        body = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
        return quote + body + quote
    if isinstance(value, bool) or value is None:
        return repr(value)
    assert isinstance(value, int | float)
    sign = "-" if math.copysign(1, value) < 0 else ""
    return sign + rnd.choice(["", " "]) + repr(abs(value)) if sign else repr(value)


def render(expr: Expr, rnd: random.Random) -> str:
    """Text for `expr` that parses back to the same structure, with random spacing."""

    def space() -> str:
        return rnd.choice([" ", " ", "  ", "\n", "\t", " \n  "])

    def sub(child: Expr, minimum: int) -> str:
        text = render(child, rnd)
        if precedence(child) < minimum or rnd.random() < 0.1:
            return "(" + rnd.choice(["", " "]) + text + rnd.choice(["", " "]) + ")"
        return text

    if isinstance(expr, Lit):
        return render_literal(expr.value, rnd)
    if isinstance(expr, Ref):
        dot = rnd.choice([".", ".", " . "])
        return f"session{dot}{expr.ref.namespace}{dot}{expr.ref.entry}"
    if isinstance(expr, Neg):
        return "not" + space() + sub(expr.operand, 3)
    if isinstance(expr, Junction):
        # An operand of the same junction is parenthesised so the tree shape is kept.
        floor = precedence(expr) + 1
        return (space() + expr.word + space()).join(sub(o, floor) for o in expr.operands)
    parts = [sub(expr.first, 5)]
    for op, right in expr.links:
        parts += [space() + op + space(), sub(right, 5)]
    return "".join(parts)


# -- the reference evaluator ---------------------------------------------------------------


def tree_value(expr: Expr, memory: Mapping[Reference, object]) -> object:
    """Python semantics over the generated tree, written independently of keel."""
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Ref):
        return memory.get(expr.ref)
    if isinstance(expr, Neg):
        return not tree_value(expr.operand, memory)
    if isinstance(expr, Junction):
        value: object = None
        for operand in expr.operands:
            value = tree_value(operand, memory)
            if (expr.word == "and" and not value) or (expr.word == "or" and value):
                return value
        return value
    left = tree_value(expr.first, memory)
    for op, right_expr in expr.links:
        right = tree_value(right_expr, memory)
        result = OPS[op](left, right)
        if not result:
            return result
        left = right
    return result


def expected_outcome(compute: Callable[[], object]) -> Outcome:
    try:
        return Outcome.TRUE if bool(compute()) else Outcome.FALSE
    except Exception:
        return Outcome.CLOSED


def python_outcome(text: str, memory: Mapping[Reference, object]) -> Outcome:
    namespaces = {ns: SimpleNamespace(**dict.fromkeys(ENTRIES)) for ns in NAMESPACES}
    for ref, value in memory.items():
        setattr(namespaces[ref.namespace], ref.entry, value)
    session = SimpleNamespace(**namespaces)
    # Wrapped in parentheses so Python accepts the newlines the renderer puts in.
    code = compile("(" + text + "\n)", "<generated>", "eval")
    return expected_outcome(lambda: eval(code, {"__builtins__": {}}, {"session": session}))


def refs_in(expr: Expr) -> set[Reference]:
    if isinstance(expr, Ref):
        return {expr.ref}
    if isinstance(expr, Lit):
        return set()
    if isinstance(expr, Neg):
        return refs_in(expr.operand)
    if isinstance(expr, Junction):
        return set().union(*(refs_in(o) for o in expr.operands))
    return refs_in(expr.first).union(*(refs_in(r) for _, r in expr.links))


def reader_for(memory: Mapping[Reference, object]) -> Callable[[Reference], object]:
    def read(ref: Reference) -> object:
        value = memory.get(ref)
        if value is UNREADABLE:
            raise Unreadable(ref)
        return value

    return read


# -- properties ----------------------------------------------------------------------------


@FUZZ
@given(expr=expressions, memory=memories, rnd=st.randoms(use_true_random=False))
def test_generated_conditions_evaluate_like_python_and_fail_closed(
    expr: Expr, memory: dict[Reference, object], rnd: random.Random
) -> None:
    text = render(expr, rnd)
    condition = parse_condition(text)
    assert condition.references == refs_in(expr)

    outcome = evaluate(condition, reader_for(memory))

    if any(memory.get(ref) is UNREADABLE for ref in condition.references):
        assert outcome is Outcome.CLOSED
        return
    readable = {ref: v for ref, v in memory.items() if v is not UNREADABLE}
    assert outcome is expected_outcome(lambda: tree_value(expr, readable))
    assert outcome is python_outcome(text, readable)


@settings(FUZZ, max_examples=300)
@given(expr=numeric_expressions, memory=numeric_memories, rnd=st.randoms(use_true_random=False))
def test_numeric_conditions_evaluate_like_python(
    expr: Expr, memory: dict[Reference, object], rnd: random.Random
) -> None:
    text = render(expr, rnd)
    outcome = evaluate(parse_condition(text), reader_for(memory))
    assert outcome is not Outcome.CLOSED
    assert outcome is expected_outcome(lambda: tree_value(expr, memory))
    assert outcome is python_outcome(text, memory)


@FUZZ
@given(expr=expressions, rnd=st.randoms(use_true_random=False), data=st.data())
def test_evaluate_never_raises_whatever_the_reader_does(
    expr: Expr, rnd: random.Random, data: st.DataObject
) -> None:
    condition = parse_condition(render(expr, rnd))
    failure = data.draw(st.sampled_from([None, Unreadable(), RuntimeError(), KeyError("k")]))
    value = data.draw(memory_values)

    def read(ref: Reference) -> object:
        if failure is not None:
            raise failure
        return value

    outcome = evaluate(condition, read)
    assert isinstance(outcome, Outcome)
    if failure is not None and condition.references:
        assert outcome is Outcome.CLOSED
