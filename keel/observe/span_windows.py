"""Where a turn's block steps and plan runs lie in its events: the windows that model and
tool spans hang under (the innermost window whose events surround them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from keel.events.model import (
    FlowStarted,
    OrderedBlockCancelled,
    OrderedBlockCompleted,
    OrderedBlockInterrupted,
    OrderedBlockResumed,
    PlanCacheDecided,
    PlanExecuted,
    StepAdvanced,
)
from keel.observe.digest import STEP_KINDS, Turn
from keel.observe.otlp import AttributeValue

_END = "END"
_PLAN_LAYERS = {"l0", "l1", "l3"}


@dataclass(kw_only=True, slots=True)
class Window:
    """A step or plan run: spans whose events fall strictly inside it hang under it."""

    start_seq: int
    end_seq: int
    start: float
    end: float
    name: str
    attributes: dict[str, AttributeValue]
    span_id: bytes = b""


def _steps(turn: Turn) -> list[Window]:
    """The block steps entered in the turn, each until the next step or the block's end."""
    done: list[Window] = []
    open_steps: dict[tuple[str, str], Window] = {}
    end_seq = turn.events[-1][0] + 1

    def close(key: tuple[str, str], seq: int, at: float) -> None:
        window = open_steps.pop(key, None)
        if window is not None:
            window.end_seq, window.end = seq, at
            done.append(window)

    def enter(skill: str, block: str, step: str, seq: int, at: float) -> None:
        close((skill, block), seq, at)
        if step in (_END, "autonomous"):
            return
        attributes: dict[str, AttributeValue] = {
            "keel.skill.id": skill,
            "keel.block.id": block,
            "keel.step.id": step,
        }
        open_steps[(skill, block)] = Window(
            start_seq=seq,
            end_seq=end_seq,
            start=at,
            end=turn.end,
            name=f"step {skill}/{block}/{step}",
            attributes=attributes,
        )

    for seq, event in turn.events:
        at = event.timestamp
        if isinstance(event, StepAdvanced):
            enter(event.skill_id, event.block_id, event.step_id, seq, at)
        elif isinstance(event, FlowStarted) and "__" in event.flow_id:
            skill, block = event.flow_id.rsplit("__", 1)
            enter(skill, block, event.step_id, seq, at)
        elif isinstance(event, OrderedBlockResumed):
            enter(event.skill_id, event.block_id, event.step_id, seq, at)
        elif isinstance(
            event, OrderedBlockCompleted | OrderedBlockCancelled | OrderedBlockInterrupted
        ):
            close((event.skill_id, event.block_id), seq, at)
    done.extend(open_steps.values())
    return done


def _plans(turn: Turn) -> list[Window]:
    """Each plan run, from the cascade decision that chose it to its `plan_executed`."""
    windows: list[Window] = []
    opened: tuple[int, float] | None = None
    for seq, event in turn.events:
        if isinstance(event, PlanCacheDecided) and event.layer in _PLAN_LAYERS:
            opened = (seq, event.timestamp)
        elif isinstance(event, PlanExecuted):
            start_seq, start = opened if opened is not None else (seq, event.timestamp)
            attributes: dict[str, AttributeValue] = {
                "keel.plan.source": event.source,
                "keel.plan.status": event.status,
                "keel.plan.shape_hash": event.shape_hash,
                "keel.plan.steps_run": event.steps_run,
            }
            if event.entry_id is not None:
                attributes["keel.plan.entry_id"] = event.entry_id
            if event.error_code is not None:
                attributes["error.type"] = event.error_code
            windows.append(
                Window(
                    start_seq=start_seq,
                    end_seq=seq + 1,
                    start=start,
                    end=event.timestamp,
                    name=f"plan {event.source}",
                    attributes=attributes,
                )
            )
            opened = None
    return windows


def innermost(windows: Sequence[Window], seq: int) -> Window | None:
    best: Window | None = None
    for window in windows:
        if window.start_seq < seq < window.end_seq and (
            best is None or window.start_seq > best.start_seq
        ):
            best = window
    return best


def turn_windows(turn: Turn) -> list[Window]:
    """The turn's step and plan windows, in the order they open."""
    windows: list[Window] = []
    if not turn.kinds.isdisjoint(STEP_KINDS):
        windows += _steps(turn)
    if PlanExecuted in turn.kinds:
        windows += _plans(turn)
    windows.sort(key=lambda w: w.start_seq)
    return windows
