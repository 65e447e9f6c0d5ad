"""A server that will route offline builds the router's skill index at startup, in the
background, so the first routed message does not wait for the embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
from routing_kit import RETAIL

from keel.ids import FakeClock
from keel.loop.offline import warm_router
from keel.routing import index
from keel.server import ServerSettings
from keel.server.runtime import ServerRuntime

SCRIPT = Path(__file__).resolve().parents[2] / "examples/retail/scripts/cancel_order.yml"


def runtime(tmp_path: Path, model: str) -> ServerRuntime:
    settings = ServerSettings(
        project=RETAIL, database_url=f"sqlite:///{tmp_path / 'keel.db'}", model=model
    )
    return ServerRuntime(settings, clock=FakeClock())


async def test_with_no_model_the_skill_index_is_built_at_startup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "_CACHE", {})  # nothing embedded by earlier tests
    served = runtime(tmp_path, "none")
    await served.open()
    try:
        engine = served.engine
        warming = served._get().warming
        assert warming is not None
        await warming
        embedded: list[int] = []
        embed = engine.router.embedder.embed

        async def counting(texts: list[str]) -> object:
            embedded.append(len(texts))
            return await embed(texts)

        monkeypatch.setattr(engine.router.embedder, "embed", counting)
        await warm_router(engine.router, engine.definition)
        assert embedded == []  # every skill text was embedded at startup already
    finally:
        await served.close()


async def test_with_a_model_nothing_is_prepared(tmp_path: Path) -> None:
    served = runtime(tmp_path, f"scripted:{SCRIPT}")
    await served.open()
    try:
        assert served._get().warming is None
    finally:
        await served.close()
