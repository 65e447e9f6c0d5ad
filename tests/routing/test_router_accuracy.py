"""Acceptance: the offline router on the 113 labelled retail messages (bench/router)."""

from __future__ import annotations

from evaluate import load_cases, score_keywords, score_router
from routing_kit import RETAIL

from keel.embeddings.local import LocalEmbedder
from keel.testing.harness import load_definition


async def test_offline_router_beats_the_floor_and_the_keyword_baseline(
    embedder: LocalEmbedder,
) -> None:
    definition = load_definition(RETAIL)
    config = definition.config.offline.router
    cases = load_cases(definition)
    assert len(cases) >= 100
    router, _ = await score_router(definition, embedder, cases, config)
    keywords = score_keywords(definition, cases, config)
    assert router.accuracy >= 0.85
    assert router.accuracy > keywords.accuracy
    # Confident decisions are rarely wrong: most misses become questions, not wrong routes.
    assert router.routed_wrong <= 0.06 * router.cases
