"""The offline router: scores a message against the eligible skills and decides.

`OfflineRouter.rank` embeds the message (one call to the embedder) and scores each
eligible skill by its best-matching text (`keel.routing.index`). `decide` routes when the
best score reaches `threshold` and leads the second best by `margin`; otherwise the
decision is `unsure`, with the best candidates for a clarifying question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from keel.project.offline_config import RouterConfig
from keel.skills.model import SkillDocument

if TYPE_CHECKING:
    from keel.embeddings.port import Embedder
    from keel.project.definition import AgentDefinition


@dataclass(frozen=True, kw_only=True, slots=True)
class Ranked:
    """A skill and its similarity to the message."""

    skill_id: str
    score: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """The router's answer: a skill (`skill_id`), or unsure with the best candidates."""

    skill_id: str | None
    confidence: float
    ranking: tuple[Ranked, ...]

    @property
    def unsure(self) -> bool:
        """No skill was confident enough."""
        return self.skill_id is None


def rank(by_skill: dict[str, float]) -> tuple[Ranked, ...]:
    """Skills from best to worst (ties in the given order)."""
    ordered = sorted(by_skill.items(), key=lambda item: -item[1])
    return tuple(Ranked(skill_id=s, score=round(v, 4)) for s, v in ordered)


def decide(ranking: tuple[Ranked, ...], config: RouterConfig) -> Decision:
    """Route to the best skill when it is good enough and clearly ahead; else unsure."""
    if not ranking:
        return Decision(skill_id=None, confidence=0.0, ranking=())
    best = ranking[0]
    second = ranking[1].score if len(ranking) > 1 else -1.0
    sure = best.score >= config.threshold and best.score - second >= config.margin
    return Decision(
        skill_id=best.skill_id if sure else None, confidence=best.score, ranking=ranking
    )


class OfflineRouter:
    """Routes by embedding similarity; the embedder is made on first use."""

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        """`factory` makes the embedder, on first use (loading one takes a while)."""
        self._factory = factory
        self._embedder: Embedder | None = None

    @classmethod
    def for_project(cls, definition: Callable[[], AgentDefinition]) -> OfflineRouter:
        """A router on the embedder the current project definition configures (numpy and
        the weights are loaded on first use, not before)."""

        def make() -> Embedder:
            from keel.embeddings.factory import embedder_for  # lazy: numpy, the model

            return embedder_for(definition())

        return cls(make)

    @classmethod
    def of(cls, embedder: Embedder) -> OfflineRouter:
        """A router on an embedder already made."""
        return cls(lambda: embedder)

    @property
    def embedder(self) -> Embedder:
        """The embedder (made now on first use)."""
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    async def rank(
        self, documents: Sequence[SkillDocument], eligible: Sequence[str], text: str
    ) -> tuple[Ranked, ...]:
        """The eligible skills ranked by similarity to `text`."""
        from keel.routing.index import build_index, scores  # lazy: numpy

        embedder = self.embedder
        index = await build_index(embedder, documents)
        query = await embedder.embed([text])
        return rank(scores(index, query, eligible))

    async def warm(self, documents: Sequence[SkillDocument]) -> None:
        """Load the embedder and embed the skills' texts now (a server does this at startup,
        so its first routed message does not wait for it)."""
        from keel.routing.index import build_index  # lazy: numpy

        await build_index(self.embedder, documents)

    async def route(
        self,
        documents: Sequence[SkillDocument],
        eligible: Sequence[str],
        text: str,
        config: RouterConfig,
    ) -> Decision:
        """`rank`, then `decide`."""
        return decide(await self.rank(documents, eligible, text), config)
