"""Voice mode in the loop: the channel comes from the session start's metadata (in the log),
the prompt takes the voice rules and the acknowledgement section, and text beside the
turn's first tool call is a filler (spec §7.6, §9.3, §11.2)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from keel.events.fold import SESSION_METADATA_KEY
from keel.events.model import BotMessage, MemorySet
from keel.loop.prompt_sections import DEFAULT_TEXT_RULES
from keel.loop.voice import channel_of
from keel.testing import ConversationHarness, ScriptedModel

SUPPORT = Path(__file__).resolve().parents[2] / "examples" / "support"
VOICE_RULES = "Speak in one or two short sentences"
TEXT_RULES = "Keep replies under four short sentences"

FILLER_THEN_ANSWER: list[Mapping[str, object] | str] = [
    {
        "text": "One moment while I look.",
        "tool_calls": [{"name": "activate", "arguments": {"target_id": "billing_question"}}],
    },
    "Your bill is due on the first.",
]


def _system(model: ScriptedModel, index: int) -> str:
    return str(model.requests[index].messages[0]["content"])


async def test_a_voice_session_prompts_with_the_voice_rules_and_says_a_filler() -> None:
    model = ScriptedModel(FILLER_THEN_ANSWER)
    harness = ConversationHarness(SUPPORT, model)
    await harness.send("/session_start", metadata={"channel": "voice", "call_id": "CA1"})
    await harness.send("what is on my bill")
    assert channel_of(harness.state) == "voice"
    written = [e for e in harness.events if isinstance(e, MemorySet)]
    assert any(
        e.key == SESSION_METADATA_KEY and e.value.get("channel") == "voice"  # type: ignore[union-attr]
        for e in written
    )
    first = _system(model, 0)
    assert VOICE_RULES in first and TEXT_RULES not in first
    assert "## Acknowledgement" in first + str(model.requests[0].messages[-1]["content"])
    fillers = [
        e for e in harness.events if isinstance(e, BotMessage) and e.response_source == "filler"
    ]
    assert [f.text for f in fillers] == ["One moment while I look."]
    assert fillers[0].metadata["agent_message_type"] == "filler_message"


async def test_a_text_session_keeps_the_text_rules_and_model_text() -> None:
    model = ScriptedModel(FILLER_THEN_ANSWER)
    harness = ConversationHarness(SUPPORT, model)
    await harness.send("what is on my bill")
    assert channel_of(harness.state) == "text"
    first = _system(model, 0)
    assert TEXT_RULES in first and VOICE_RULES not in first
    said = [e for e in harness.events if isinstance(e, BotMessage)]
    assert "One moment while I look." in [e.text for e in said if e.response_source == "llm"]
    assert not [e for e in said if e.response_source == "filler"]
    assert DEFAULT_TEXT_RULES not in first  # the project's own text rules replace Keel's
