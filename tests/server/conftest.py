"""Fixtures of the server tests (helpers live in server_kit.py)."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from server_kit import Served, ServeFactory, serving

from keel.llm.port import Model
from keel.testing.scripted import ReplySource, ScriptedModel


@pytest.fixture
def serve(tmp_path: Path) -> ServeFactory:
    """`async with serve(replies) as served:` serves the example agent with a scripted model."""

    def factory(
        replies: Iterable[ReplySource] = (), *, model: Model | None = None, **options: object
    ) -> AbstractAsyncContextManager[Served]:
        return serving(tmp_path, model or ScriptedModel(replies), **options)  # type: ignore[arg-type]

    return factory
