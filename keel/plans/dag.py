"""The dependency graph of a plan and its schedule segments (plan-cache spec §3.11).

A step depends on the earlier steps its arguments refer to (`${stepN...}`), the step it
pipes from (`from_step`) and the step its `when` condition reads. The schedule is a list of
segments in plan order: runs of read-only steps, which may run concurrently as their
dependencies allow, and single effectful steps, which are barriers: every earlier step has
finished before an effect starts, and no later step starts before it ends. So effects happen
in plan order, never together, and reads keep their place around writes (a listing written
after a delete sees the delete). A step whose tool is not in the catalog is a barrier too
(fail closed). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from keel.plans.catalog import Catalog
from keel.plans.piping import pipe_source
from keel.plans.plan import FINAL_ANSWER, Step
from keel.plans.refs import StepRef, refs_in


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """Read-only steps that may overlap, or one effectful step."""

    effectful: bool
    steps: tuple[Step, ...]


def dependencies(step: Step) -> frozenset[int]:
    """The earlier steps `step` reads (refs, `from_step`, `when`)."""
    ids = {ref.step for ref in refs_in(step.args) if isinstance(ref, StepRef)}
    source = pipe_source(step)
    if isinstance(source, int):
        ids.add(source)
    if step.when_nonempty is not None:
        ids.add(step.when_nonempty)
    return frozenset(i for i in ids if 1 <= i < step.id)


def is_barrier(step: Step, catalog: Catalog) -> bool:
    """An effectful step, or one whose tool is unknown."""
    tool = catalog.get(step.tool)
    return tool is None or tool.contract.effectful


def segments(steps: Sequence[Step], catalog: Catalog) -> list[Segment]:
    """The tool steps before the first `final_answer`, cut at every barrier."""
    out: list[Segment] = []
    reads: list[Step] = []
    for step in steps:
        if step.tool == FINAL_ANSWER:
            break
        if not is_barrier(step, catalog):
            reads.append(step)
            continue
        if reads:
            out.append(Segment(effectful=False, steps=tuple(reads)))
            reads = []
        out.append(Segment(effectful=True, steps=(step,)))
    if reads:
        out.append(Segment(effectful=False, steps=tuple(reads)))
    return out
