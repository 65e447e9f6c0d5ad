"""The condition language: parse once, evaluate pure, fail closed.

    condition = parse_condition("session.project.verified and session.greet.count > 2")
    outcome = evaluate(condition, read_from_mapping({"project.verified": True}))

A condition is a one-line, Python-like expression over memory references
`session.<namespace>.<entry>` (mantle spec §4). Parsing is hand-written; user text is never
handed to Python's own parser or evaluator.
"""

from keel.conditions.condition import (
    And,
    Compare,
    CompareOp,
    Comparison,
    Condition,
    Constant,
    MemoryRef,
    Node,
    Not,
    Or,
    walk,
)
from keel.conditions.errors import ERROR_CODES, ConditionSyntaxError, Unreadable
from keel.conditions.evaluation import MemoryReader, Outcome, evaluate, holds, read_from_mapping
from keel.conditions.names import Reference
from keel.conditions.parse import MAX_DEPTH, parse_condition

__all__ = [
    "ERROR_CODES",
    "MAX_DEPTH",
    "And",
    "Compare",
    "CompareOp",
    "Comparison",
    "Condition",
    "ConditionSyntaxError",
    "Constant",
    "MemoryReader",
    "MemoryRef",
    "Node",
    "Not",
    "Or",
    "Outcome",
    "Reference",
    "Unreadable",
    "evaluate",
    "holds",
    "parse_condition",
    "read_from_mapping",
    "walk",
]
