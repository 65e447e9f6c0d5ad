"""The plan cascade is a plug-in: the loop runs the same without one and with one that
answers nothing (the `TurnPlans` port of `keel.loop.turn`).

Every conversation test of `tests/conversations` is played three times on the same scripted
replies, clock and ids: with no cascade (none of those agents enables `plan_cache`), with a
cascade whose three methods answer None or do nothing, and with one whose `before_model`
ends every turn that would ask the model. The first two logs must be identical, event for
event; the third must differ (so the comparison can see a cascade that does something).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from keel.events.model import Event
from keel.llm.port import Model
from keel.loop.recorder import Recorder
from keel.loop.turn import Next, PlanCascade, TurnContext, TurnPlans
from keel.plans.memory_store import MemoryPlanStore
from keel.plans.store_port import PlanStore
from keel.project.definition import AgentDefinition
from keel.testing.conversation import run_test_file
from keel.testing.harness import ConversationHarness, make_harness
from keel.tools.dispatch import ToolRun

CONVERSATIONS = Path(__file__).resolve().parents[2] / "conversations"
FILES = sorted(CONVERSATIONS.glob("*.yml"))


class _Asked:
    """Counts what the loop asked of the cascade."""

    def __init__(self) -> None:
        self.before_model = 0
        self.after_turn = 0


class _SilentTurn:
    def __init__(self, asked: _Asked, answer: Next | None) -> None:
        self.asked = asked
        self.answer = answer

    async def before_model(self, t: TurnContext) -> Next | None:
        self.asked.before_model += 1
        return self.answer

    async def after_approval(
        self, t: TurnContext, skill_id: str, resume: Mapping[str, object], run: ToolRun
    ) -> Next | None:
        return None

    async def after_turn(self, t: TurnContext, outcome: Next) -> None:
        self.asked.after_turn += 1


class _SilentCascade:
    """A cascade with no plans: it is asked, and answers `answer` (None: nothing)."""

    def __init__(self, asked: _Asked, answer: Next | None = None) -> None:
        self.asked = asked
        self.answer = answer
        self._store = MemoryPlanStore()

    @property
    def store(self) -> PlanStore:
        return self._store

    def for_turn(self) -> TurnPlans:
        return _SilentTurn(self.asked, self.answer)

    async def feedback(
        self, recorder: Recorder, history: tuple[Event, ...], turn_id: str, signal: str, now: float
    ) -> str:
        return "none"

    async def maintain(self, definition: AgentDefinition, now: float) -> dict[str, int]:
        return {}


def _logs(cascade: Callable[[], PlanCascade | None]) -> list[tuple[Event, ...]]:
    """Every case's whole log, in corpus order, with the cascade `cascade()` makes."""
    harnesses: list[ConversationHarness] = []

    def factory(agent: Path, model: Model) -> ConversationHarness:
        harness = make_harness(agent, model)
        assert harness.engine.plans is None  # no agent of the corpus enables plan_cache
        harness.engine.plans = cascade()
        harnesses.append(harness)
        return harness

    for path in FILES:
        result = run_test_file(path, factory)
        assert result.results and not result.malformed
    return [h.events for h in harnesses]


def test_no_cascade_and_a_silent_cascade_give_the_same_events() -> None:
    asked = _Asked()
    without = _logs(lambda: None)
    silent = _logs(lambda: _SilentCascade(asked))
    assert len(without) == len(silent) >= 50
    for one, other in zip(without, silent, strict=True):
        assert one == other
    assert asked.before_model > 0 and asked.after_turn > 0  # the port was really asked


def test_a_cascade_that_answers_changes_the_events() -> None:
    asked = _Asked()
    without = _logs(lambda: None)
    waiting = _logs(lambda: _SilentCascade(asked, Next.WAIT))
    assert asked.before_model > 0
    assert without != waiting
