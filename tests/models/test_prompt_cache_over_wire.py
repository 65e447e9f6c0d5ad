"""A conversation over the Chat Completions wire: every request carries the conversation's
`prompt_cache_key`, and the cached prompt tokens the server reports reach `model_called`
and its cost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from keel.events.model import ModelCalled
from keel.ids import FakeClock
from keel.llm.openai import OpenAIChatModel
from keel.llm.port import Usage
from keel.llm.prefix import cache_key
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.openai_wire_server import OpenAIWireServer

PLAIN = Path(__file__).parent / "agents" / "plain"
PRICES = """\
llm:
  model_group: main
model_groups:
  - id: main
    models:
      - provider: scripted
        model: main-1
        input_cost_per_token: 0.000002
        output_cost_per_token: 0.000008
        cached_input_cost_per_token: 0.0000005
"""
USAGE = Usage(input_tokens=2000, output_tokens=20, cached_input_tokens=1536)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    copy = tmp_path / "plain"
    shutil.copytree(PLAIN, copy)
    (copy / "integrations.yml").write_text(PRICES, encoding="utf-8")
    return copy


async def test_requests_carry_the_cache_key_and_model_called_the_cached_tokens(
    agent: Path,
) -> None:
    script = ScriptedModel(["Hello! How can I help?", "We open at nine."])
    clock = FakeClock()
    with OpenAIWireServer(usage=USAGE) as server:
        server.use(script)
        model = OpenAIChatModel(model="main-1", base_url=server.base_url, timeout=5)
        harness = ConversationHarness(agent, model, clock=clock)
        try:
            await harness.send("hi")
            clock.advance(120)
            await harness.send("when do you open?")
        finally:
            await harness.aclose()
            await model.aclose()
        bodies = [request.body for request in server.requests]

    script.assert_complete()
    key = cache_key("plain-test", harness.conversation_id)
    assert [body.get("prompt_cache_key") for body in bodies] == [key, key]
    calls = [e for e in harness.events if isinstance(e, ModelCalled)]
    assert [(c.input_tokens, c.cached_input_tokens, c.cache_write_tokens) for c in calls] == [
        (2000, 1536, 0),
        (2000, 1536, 0),
    ]
    # 464 fresh prompt tokens at 2e-6, 1,536 cached at 0.5e-6, 20 out at 8e-6.
    expected = 464 * 2e-6 + 1536 * 0.5e-6 + 20 * 8e-6
    assert [c.cost for c in calls] == [pytest.approx(expected)] * 2
