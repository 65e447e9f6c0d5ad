"""`Condition`: a parsed condition, ready to evaluate many times."""

from __future__ import annotations

from dataclasses import dataclass, field

from keel.conditions.names import Reference
from keel.conditions.nodes import MemoryRef, Node, walk
from keel.conditions.program import Program, compile_program


@dataclass(frozen=True, kw_only=True, slots=True)
class Condition:
    """A parsed condition: its source text, its tree and every memory entry it reads.

    Built by `parse_condition`. On construction the tree is compiled once (the hidden
    `_read_order` and `_program` fields), so that `evaluate` only reads memory and calls.
    """

    source: str
    tree: Node
    references: frozenset[Reference]
    _read_order: tuple[Reference, ...] = field(init=False, repr=False, compare=False)
    _program: Program = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unlisted = {
            node.reference.key
            for node in walk(self.tree)
            if isinstance(node, MemoryRef) and node.reference not in self.references
        }
        if unlisted:
            raise ValueError(f"tree reads references missing from `references`: {unlisted}")
        # Sorted so that readers with side effects (tracing, counters) see a stable order.
        order = tuple(sorted(self.references, key=lambda ref: (ref.namespace, ref.entry)))
        object.__setattr__(self, "_read_order", order)
        object.__setattr__(self, "_program", compile_program(self.tree, order))
