"""Two consecutive model requests of a conversation, the clock moved between them, share a
byte-identical prefix up to the prompt's volatile sections (provider prompt caches)."""

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

    # The tool schemas, persona, rules, glossary, framework tools and the skill's prose...
    assert "Count with bump." in shared
    stable = _system(second)[: second.cache.stable_system_chars]
    assert json.dumps(stable)[1:-1] in shared
    # ... and the first difference is the moved clock (00:00 then 00:03), after them.
    assert shared.endswith("## Now\\nIt is Thursday 2026-01-01 00:0")
    share = prefix_share(before, after)
    assert share > 0.5, f"the second request repeats {share:.1%} of the first's prefix"


async def test_the_request_says_where_its_stable_part_ends_and_names_its_conversation() -> None:
    first, second, harness = await _two_turns()
    stable = second.cache.stable_system_chars
    assert stable > 0 and first.cache.stable_system_chars == stable
    assert _system(first)[:stable] == _system(second)[:stable]
    assert _system(first)[stable:] != _system(second)[stable:]  # the clock moved
    assert _system(second)[stable:].startswith("\n\n")  # the blank line between the parts
    assert "## Now" in _system(second)[stable:]
    assert first.cache.key == second.cache.key == cache_key(AGENT_ID, harness.conversation_id)
    assert harness.conversation_id not in (second.cache.key or "")
