"""Router accuracy on the labelled retail utterances: the offline router and the keyword
baseline, scored the same way (shared by bench/router/run.py and tests/routing)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import yaml

from keel.embeddings.local import LocalEmbedder
from keel.embeddings.port import Embedder
from keel.events.fold import ConversationState
from keel.loop.offer import eligible_skills
from keel.project.definition import AgentDefinition
from keel.project.offline_config import RouterConfig
from keel.routing.keyword import keyword_scores
from keel.routing.router import OfflineRouter, decide, rank

HERE = Path(__file__).parent
UTTERANCES = HERE / "utterances.yml"
STATES = {
    "signed_in": MappingProxyType({"project.user_id": "someone"}),
    "signed_out": MappingProxyType({}),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class Case:
    text: str
    label: str
    eligible: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class Score:
    """Top-1 accuracy, and at the configured threshold: routed right, routed wrong, asked."""

    cases: int
    top1: int
    routed_right: int
    routed_wrong: int
    unsure: int

    @property
    def accuracy(self) -> float:
        return self.top1 / self.cases


def load_cases(definition: AgentDefinition, path: Path = UTTERANCES) -> list[Case]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases: list[Case] = []
    for group, by_skill in data.items():
        state = ConversationState(memory=STATES[group])
        eligible = tuple(s.skill_id for s in eligible_skills(definition, state))
        for label, texts in by_skill.items():
            assert label in eligible, (group, label, eligible)
            cases += [Case(text=t, label=label, eligible=eligible) for t in texts]
    return cases


def _tally(results: list[tuple[str, str, str | None]]) -> Score:
    return Score(
        cases=len(results),
        top1=sum(best == label for label, best, _ in results),
        routed_right=sum(routed == label for label, _, routed in results),
        routed_wrong=sum(routed not in (None, label) for label, _, routed in results),
        unsure=sum(routed is None for _, _, routed in results),
    )


async def score_router(
    definition: AgentDefinition, embedder: Embedder, cases: list[Case], config: RouterConfig
) -> tuple[Score, list[tuple[Case, str]]]:
    """The offline router's score, and the cases it ranked wrong (with its pick)."""
    router = OfflineRouter.of(embedder)
    documents = tuple(s.document for s in definition.skills.values())
    results, misses = [], []
    for case in cases:
        ranking = await router.rank(documents, case.eligible, case.text)
        decision = decide(ranking, config)
        results.append((case.label, ranking[0].skill_id, decision.skill_id))
        if ranking[0].skill_id != case.label:
            misses.append((case, ranking[0].skill_id))
    return _tally(results), misses


def score_keywords(definition: AgentDefinition, cases: list[Case], config: RouterConfig) -> Score:
    """The keyword baseline's score (its own scale: share of words matched; same rule)."""
    results = []
    for case in cases:
        documents = [definition.skills[s].document for s in case.eligible]
        ranking = rank(keyword_scores(case.text, documents))
        decision = decide(ranking, config)
        results.append((case.label, ranking[0].skill_id, decision.skill_id))
    return _tally(results)


def embedding_latency_ms(embedder: LocalEmbedder, texts: list[str]) -> tuple[float, float]:
    """Median and p95 milliseconds to embed one sentence (`encode`, one at a time)."""
    encode = embedder.encode
    encode(texts[:1])  # load the weights first
    times = []
    for text in texts:
        started = time.perf_counter()
        encode([text])
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]
