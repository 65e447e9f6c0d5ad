"""Two consecutive model requests of a conversation, the clock moved between them, share a
byte-identical prefix: the tools, the prompt's stable part and the history; the volatile
sections (step, memory, clock) close each request after the history (provider prompt caches)."""

from __future__ import annotations

import json
from pathlib import Path

from keel.ids import FakeClock
from keel.llm.port import ModelRequest
from keel.llm.prefix import cache_key, prefix_share, request_text, shared_prefix_length
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).parent / "hardening_agent"
AGENT_ID = "hardening-test"
ACTIVATE_COUNTER = {"tool_calls": [{"name": "activate", "arguments": {"target_id": "counter"}}]}


def _system(request: ModelRequest) -> str:
    first = request.messages[0]
    assert first["role"] == "system"
    return str(first["content"])


async def _two_turns() -> tuple[ModelRequest, ModelRequest, ConversationHarness]:
    clock = FakeClock()
    script = ScriptedModel([ACTIVATE_COUNTER, "Counting.", "Counted again."])
    harness = ConversationHarness(AGENT, script, clock=clock)
    await harness.send("count")
    clock.advance(3 * 60 + 7)  # a few minutes pass between the user's messages
    await harness.send("once more")
    script.assert_complete()
    _routing, first, second = script.requests
    return first, second, harness


async def test_the_next_turns_request_repeats_everything_before_the_volatile_sections() -> None:
    first, second, _ = await _two_turns()
    before, after = request_text(first), request_text(second)
    shared = after[: shared_prefix_length(before, after)]

    # The tool schemas, persona, rules, glossary, framework tools, the skill's prose...
    assert "Count with bump." in shared
    assert json.dumps(_system(second))[1:-1] in shared
    # ... and the whole history: the first difference is where the first request's closing
    # context (with its clock) stood, after every message it shared with the second.
    opening, closing = before.rsplit("\n", 1)  # request_text: one line per message
    assert "## Now" in closing and "## Now" not in opening
    assert after.startswith(opening + "\n")
    assert "## Now" not in shared
    share = prefix_share(before, after)
    assert share > 0.8, f"the second request repeats {share:.1%} of the first's prefix"


async def test_the_request_says_where_its_stable_part_ends_and_names_its_conversation() -> None:
    first, second, harness = await _two_turns()
    stable = second.cache.stable_system_chars
    assert stable == len(_system(second)) and first.cache.stable_system_chars == stable
    assert _system(first) == _system(second)  # the opening system message does not change
    closing_first, closing_second = first.messages[-1], second.messages[-1]
    assert closing_first["role"] == closing_second["role"] == "system"
    assert "## Now" in str(closing_second["content"])
    assert closing_first["content"] != closing_second["content"]  # the clock moved
    assert "## Now" not in _system(second)
    assert first.cache.key == second.cache.key == cache_key(AGENT_ID, harness.conversation_id)
    assert harness.conversation_id not in (second.cache.key or "")
