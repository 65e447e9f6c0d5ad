"""How much of a real agent's traffic the plan cache serves: examples/retail's conversation tests.

    python bench/plancache/retail_usage.py [--passes 3] [--json]

Every conversation test of `examples/retail/tests` is played through ONE engine, store and
plan cache (as in production, where the cache is shared by every conversation), each test
in a conversation of its own and with the store's database fresh (`retaildb.reset()`).
Pass 1 fills the cache; pass 2 plays the same conversations again, word for word; pass 3
plays them with the user's messages paraphrased (`PARAPHRASES`, our own). Per pass it
reports the turns, the model calls made, how often the cache was consulted and served, the
model calls a served plan saved (the scripted replies it left unused), and the tests whose
outcome changed: a served plan that makes a conversation end differently from pass 1 is a
wrong replay (a test that fails only because scripted replies were left over is a saving,
not a change).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from keel.events.base import JsonValue
from keel.events.fold import ConversationState
from keel.events.model import EventBase, PlanCacheDecided
from keel.testing.conversation.discover import find_test_files
from keel.testing.conversation.parse import parse_test_file
from keel.testing.conversation.runner import run_case
from keel.testing.conversation.spec import ConversationCase, UserStep
from keel.testing.harness import ConversationHarness, load_definition
from keel.testing.harness_protocol import TurnOutcome
from keel.testing.scripted import ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "retail"

PARAPHRASES: Mapping[str, str] = {
    "what's the status of my other order, W8770097?": "what is my other order's status, W8770097?",
    "is it still pending?": "is it pending still?",
    "great, thanks": "great, thank you",
    "I have a question about my orders": "I've got a question about my orders",
    "why do you need a reason?": "why is a reason needed?",
    "then exchange it": "exchange it then",
    "no, keep it": "no, I'll keep it",
}
"""User messages of the corpus said another way (pass 3); messages not listed are kept."""


@dataclass(kw_only=True)
class Tally:
    """One pass's counts."""

    turns: int = 0
    model_calls: int = 0
    consulted: int = 0
    served: int = 0
    replies_unused: int = 0
    changed: list[str] = field(default_factory=list)


class SharedHarness:
    """One test's view of the shared harness: its own conversation, the shared engine."""

    def __init__(self, shared: ConversationHarness, conversation_id: str) -> None:
        self.shared = shared
        self.conversation_id = conversation_id
        self.started = False
        self.model = ScriptedModel()

    def attach(self, _agent: Path, model: ScriptedModel) -> SharedHarness:
        """The runner's harness factory: this view, answering through the test's model."""
        self.model = self.shared.engine.model = model
        return self

    async def send(
        self, text: str, *, metadata: Mapping[str, JsonValue] | None = None
    ) -> TurnOutcome:
        if not self.started:
            await self.shared.switch(self.conversation_id)
            self.started = True
        return await self.shared.send(text, metadata=metadata)

    @property
    def events(self) -> tuple[EventBase, ...]:
        return self.shared.events if self.started else ()

    @property
    def state(self) -> ConversationState:
        return self.shared.state if self.started else ConversationState()


def _paraphrased(case: ConversationCase) -> ConversationCase:
    steps = tuple(
        UserStep(line=s.line, text=PARAPHRASES.get(s.text, s.text), metadata=s.metadata)
        if isinstance(s, UserStep) and s.cancel_on_tool is None
        else s
        for s in case.steps
    )
    return ConversationCase(
        name=case.name, line=case.line, steps=steps, allow_leftover=case.allow_leftover
    )


async def measure(passes: int) -> list[Tally]:
    """Play the corpus `passes` times through one engine (see the module docstring)."""
    sys.path.insert(0, str(AGENT))
    import retaildb  # the package the project's tools import

    definition = load_definition(AGENT)
    shared = ConversationHarness(definition, ScriptedModel())
    files = [parse_test_file(path) for path in find_test_files([AGENT / "tests"])]
    baseline: dict[str, bool] = {}
    tallies: list[Tally] = []
    for number in range(1, passes + 1):
        tally = Tally()
        for parsed, _ in files:
            assert parsed is not None, "the retail tests parse"
            for index, case in enumerate(parsed.cases):
                played = _paraphrased(case) if number == 3 else case
                retaildb.reset()
                view = SharedHarness(shared, f"p{number}-{parsed.display}-{index}")
                result = await run_case(played, parsed, view.attach)
                model = view.model
                key = f"{parsed.display}::{case.name}"
                tally.turns += sum(1 for s in case.steps if isinstance(s, UserStep))
                tally.model_calls += len(model.requests)
                tally.replies_unused += len(model.remaining)
                decided = [e for e in view.events if isinstance(e, PlanCacheDecided)]
                tally.consulted += sum(1 for e in decided if e.layer in ("l0", "l1"))
                tally.served += sum(1 for e in decided if e.layer in ("l0", "l1") and e.hit)
                ok = result.passed or "left over" in (result.reason or "")
                if number == 1:
                    baseline[key] = ok
                elif ok != baseline.get(key, ok):
                    tally.changed.append(key)
        tallies.append(tally)
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tallies = asyncio.run(measure(args.passes))
    if args.json:
        print(json.dumps([t.__dict__ for t in tallies], indent=2))
        return
    names = {1: "fill", 2: "same words", 3: "paraphrased"}
    print("| pass | turns | model calls | consulted | served | model calls saved | changed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for number, t in enumerate(tallies, start=1):
        name = names.get(number, str(number))
        print(
            f"| {number} ({name}) | {t.turns} | {t.model_calls} | {t.consulted} | {t.served} "
            f"| {t.replies_unused} | {len(t.changed)} |"
        )
    for number, t in enumerate(tallies, start=1):
        for key in t.changed:
            print(f"pass {number}: outcome changed: {key}")


if __name__ == "__main__":
    main()
