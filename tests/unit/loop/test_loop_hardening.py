"""Bounds and hygiene of the turn loop, on a real project (`hardening_agent`):

* one model reply runs at most `max_tool_calls_per_reply` tool calls; the rest are refused;
* the model never reads a control message (`/session_start`, `set:` payloads...) as the
  user's words;
* every `memory_set` the engine appends has its `slot_set` copy;
* a skill whose `requires` is not true is not named anywhere in the prompt;
* a tool that raises, a provider failure and a store error are logged at ERROR.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import pytest

from keel.errors import StoreError
from keel.events.model import (
    Event,
    MemorySet,
    SlotSet,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    TurnStarted,
)
from keel.llm.errors import ProviderUnavailable
from keel.llm.port import ModelRequest, ModelResponse
from keel.loop.recorder import with_slot_copies
from keel.stores.factory import open_store
from keel.testing import ConversationHarness, ScriptedModel

AGENT = Path(__file__).parent / "hardening_agent"
ACTIVATE_COUNTER = {"tool_calls": [{"name": "activate", "arguments": {"target_id": "counter"}}]}


def _tools(harness: ConversationHarness) -> ModuleType:
    """The counter skill's tool module as this harness loaded it (each load has its own)."""
    skill = harness.definition.skill("counter")
    assert skill is not None
    return sys.modules[skill.tools["bump"].func.__module__]


# Tool calls per reply ----------------------------------------------------------------------


async def test_a_reply_with_300_tool_calls_runs_the_tool_16_times() -> None:
    bumps = [{"name": "bump", "arguments": {"n": n}} for n in range(300)]
    script = ScriptedModel([ACTIVATE_COUNTER, {"tool_calls": bumps}, "Counted."])
    harness = ConversationHarness(AGENT, script)
    tools = _tools(harness)
    tools.CALLS.clear()

    result = await harness.send("count a lot")

    script.assert_complete()
    assert tools.CALLS == list(range(16)), "only the first 16 calls of the reply ran"
    assert harness.state.memory["counter.count"] == 16
    runs = [e for e in harness.events if isinstance(e, ToolExecuted) and e.tool_name == "bump"]
    assert len(runs) == 16
    refused = [e for e in harness.events if isinstance(e, ToolCallRefused)]
    assert len(refused) == 284
    assert {e.code for e in refused} == {"tool.too_many_calls"}
    assert [json.loads(e.arguments)["n"] for e in refused] == list(range(16, 300))
    # Every call of the reply has its tool result, the refused ones a coded error.
    results = [m for m in script.requests[2].messages if m["role"] == "tool"][1:]
    assert len(results) == 300
    assert results[15]["content"] == '{"count":16}'
    assert results[16]["content"] == (
        "Error (tool.too_many_calls): not run: at most 16 tool calls run per reply"
    )
    assert result.stop_reason == "end_turn"


async def test_the_cap_comes_from_agent_yml(tmp_path: Path) -> None:
    import shutil

    agent = tmp_path / "agent"
    shutil.copytree(AGENT, agent)
    config = agent / "agent.yml"
    config.write_text(config.read_text() + "max_tool_calls_per_reply: 2\n")
    bumps = [{"name": "bump", "arguments": {"n": n}} for n in range(5)]
    script = ScriptedModel([ACTIVATE_COUNTER, {"tool_calls": bumps}, "Counted."])
    harness = ConversationHarness(agent, script)
    tools = _tools(harness)
    tools.CALLS.clear()

    await harness.send("count")

    assert tools.CALLS == [0, 1]
    refused = [e for e in harness.events if isinstance(e, ToolCallRefused)]
    assert [(e.code, e.tool_call_id) for e in refused] == [
        ("tool.too_many_calls", "call_4"),
        ("tool.too_many_calls", "call_5"),
        ("tool.too_many_calls", "call_6"),
    ]


# Control messages --------------------------------------------------------------------------


def _user_texts(request: ModelRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "user"]


async def test_an_explicit_session_start_is_not_a_user_message_to_the_model() -> None:
    script = ScriptedModel(["Hi there."])
    harness = ConversationHarness(AGENT, script)

    await harness.send("/session_start")
    await harness.send("hello")

    script.assert_complete()
    assert _user_texts(script.requests[0]) == ["hello"]


@pytest.mark.parametrize(
    ("command", "read"),
    [("/session_end", ["hello", "again"]), ("/restart", ["again"])],
)
async def test_session_end_and_restart_are_not_user_messages_to_the_model(
    command: str, read: list[str]
) -> None:
    script = ScriptedModel(["Hi there.", "Back again."])
    harness = ConversationHarness(AGENT, script)

    await harness.send("hello")
    await harness.send(command)  # no model call (keel.loop.driver.control_turn)
    await harness.send("again")

    script.assert_complete()
    # After a restart the model reads nothing said before it.
    assert _user_texts(script.requests[1]) == read
    assert command not in str(script.requests[1].messages)


LISTEN = {"tool_calls": [{"name": "listen"}]}


@pytest.mark.parametrize(
    ("metadata", "said"),
    [({"button_title": "Gold plan"}, ["count", "Gold plan"]), ({}, ["count"])],
    ids=["with a title", "without one"],
)
async def test_a_tap_reads_as_its_button_title_and_never_as_its_payload(
    metadata: dict[str, str], said: list[str]
) -> None:
    script = ScriptedModel([ACTIVATE_COUNTER, LISTEN, "Gold it is."])
    harness = ConversationHarness(AGENT, script)

    await harness.send("count")
    await harness.send("set:session.project.plan=gold", metadata=metadata)

    script.assert_complete()
    assert harness.state.memory["project.plan"] == "gold"
    # What the user said by tapping is the button's title; a tap with no title says nothing.
    assert _user_texts(script.requests[2]) == said
    assert "set:" not in str(script.requests[2].messages)


# slot_set copies ---------------------------------------------------------------------------


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def test_every_memory_set_has_its_slot_set_copy() -> None:
    script = ScriptedModel(
        [
            ACTIVATE_COUNTER,
            _call("pay"),
            _call("resolve_tool_confirmation", confirmed=True),
            "Paid.",
            _call("activate", target_id="errand"),
            _call("complete_skill"),
        ]
    )
    harness = ConversationHarness(AGENT, script)

    await harness.send("pay please", metadata={"channel": "web"})
    await harness.send("yes")
    await harness.send("run an errand")

    script.assert_complete()
    events = harness.events
    written = {e.key for e in events if isinstance(e, MemorySet)}
    assert {
        "session_started_metadata",
        "system.pending_tool_confirmation",
        "system.resume_offer",
    } <= written
    for index, event in enumerate(events):
        if isinstance(event, MemorySet):
            copy = events[index + 1]
            assert isinstance(copy, SlotSet), f"{event.key} has no slot_set after it"
            assert (copy.name, copy.value) == (event.key, event.value)
    copies = sum(isinstance(e, SlotSet) for e in events)
    assert copies == sum(isinstance(e, MemorySet) for e in events), "one copy each, no more"


def test_a_write_that_has_its_copy_gets_no_second_one() -> None:
    written = MemorySet(key="counter.count", value=1)
    copied = SlotSet(name="counter.count", value=1, filled_by="bump")
    other = MemorySet(key="project.plan", value="gold")
    assert with_slot_copies([written, copied, other]) == [
        written,
        copied,
        other,
        SlotSet(name="project.plan", value="gold", filled_by="engine"),
    ]
    # A copy of another value is not this write's copy.
    stale = SlotSet(name="counter.count", value=2)
    assert with_slot_copies([written, stale])[1] == SlotSet(
        name="counter.count", value=1, filled_by="engine"
    )


# Skills whose requires is not true ---------------------------------------------------------

ROUTING_PROMPT = "\n".join(
    [
        "You are Tess, a terse test assistant.",
        "",
        "## Skills",
        "Skills of this assistant (id: name):",
        "- counter: Counter",
        "- errand: Errand",
        "",
        "## Channel",
        "This is a text chat. Keep replies short and plain; use a list only when it makes "
        "things clearer.",
        "",
        "## Framework tools",
        "- activate: start the skill whose id you pass as target_id, when the user's request "
        "matches it. Instructions may name the skill `<id>` or the ordered block `<id>`; to "
        "enter one, call activate with that id.",
        "- cannot_help: the engine answers with a fixed line that this cannot be handled here.",
        "",
        "## Out of scope",
        "If the user wants something this assistant does not handle, call cannot_help instead "
        "of improvising an answer or promising help.",
        "",
        "## Routing",
        "No skill is active. If the user's request matches a skill below, call activate with "
        "its id; otherwise reply briefly yourself.",
        '- counter: Counts and pays. Activate for "count", "pay".',
        '- errand: Runs a quick errand. Activate for "errand".',
    ]
)
ROUTING_CONTEXT = "\n".join(
    [
        "## Waiting for the user",
        "- listen: call it alone, with no text, to wait silently for the user (for example when "
        "they have not finished).",
        "",
        "## Now",
        "It is Thursday 2026-01-01 00:00 UTC.",
    ]
)
"""The request's closing system message (after the history): what changes between calls."""


def _said_to_model(request: ModelRequest) -> str:
    """Everything the model reads of a request: messages and tool schemas."""
    tools = [(tool.name, tool.description, dict(tool.parameters)) for tool in request.tools]
    return str(request.messages) + str(tools)


async def test_a_skill_whose_requires_is_false_is_named_nowhere() -> None:
    script = ScriptedModel(["Hello.", ACTIVATE_COUNTER, "Counting."])
    harness = ConversationHarness(AGENT, script)

    await harness.send("hello")
    await harness.send("count")

    script.assert_complete()
    routing, _, acting = script.requests
    assert routing.messages[0]["content"] == ROUTING_PROMPT
    assert routing.messages[-1] == {"role": "system", "content": ROUTING_CONTEXT}
    for request in script.requests:
        assert "lounge" not in _said_to_model(request).lower()
    # The counter's prose points at the lounge with `@skill.lounge`; it is not named.
    assert "Gold customers may also use a skill that is not available now." in str(
        acting.messages[0]["content"]
    )


async def test_a_skill_is_named_once_its_requires_holds() -> None:
    script = ScriptedModel([ACTIVATE_COUNTER, LISTEN, "Gold it is."])
    harness = ConversationHarness(AGENT, script)

    await harness.send("count")
    await harness.send("set:session.project.plan=gold", metadata={"button_title": "Gold plan"})

    script.assert_complete()
    prompt = str(script.requests[2].messages[0]["content"])
    assert "- lounge: Gold lounge" in prompt
    assert "Gold customers may also use the skill `lounge`." in prompt
    assert "Targets: errand, lounge" in _said_to_model(script.requests[2])


# Failures reach the log --------------------------------------------------------------------


def _turn_ids(events: tuple[Event, ...]) -> list[str]:
    return [e.turn_id for e in events if isinstance(e, TurnStarted)]


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.ERROR]


async def test_a_tool_that_raises_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = ScriptedModel([ACTIVATE_COUNTER, _call("explode"), "That broke."])
    harness = ConversationHarness(AGENT, script, conversation_id="conv-tool")

    with caplog.at_level(logging.ERROR, logger="keel"):
        await harness.send("explode it")

    turn = _turn_ids(harness.events)[-1]
    (record,) = _errors(caplog)
    assert record.name.startswith("keel.")
    message = record.getMessage()
    assert "explode" in message and "conv-tool" in message and turn in message
    assert (record.conversation_id, record.turn_id) == ("conv-tool", turn)  # type: ignore[attr-defined]
    assert record.exc_info is not None
    assert "RuntimeError: the counter exploded" in caplog.text
    assert "Traceback" in caplog.text


class _FailingProvider:
    """A model whose provider answers 503 (as an adapter reports it)."""

    def __init__(self, message: str) -> None:
        self.message = message

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ProviderUnavailable(self.message, status=503, provider="openai")


async def test_a_provider_failure_is_logged_without_the_api_key(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    agent = tmp_path / "agent"
    shutil.copytree(AGENT, agent)
    (agent / "integrations.yml").write_text(
        "llm:\n  model_group: main\nmodel_groups:\n  - id: main\n    models:\n"
        "      - provider: openai\n        model: gpt-test\n"
        "        api_key: ${HARDENING_TEST_KEY}\n"
    )
    monkeypatch.setenv("HARDENING_TEST_KEY", "sk-hardening-0123456789")
    model = _FailingProvider("openai: HTTP 503: overloaded (key sk-hardening-0123456789)")
    harness = ConversationHarness(agent, model, conversation_id="conv-model")

    with caplog.at_level(logging.ERROR, logger="keel"):
        result = await harness.send("hello")

    assert result.stop_reason == "error"
    turn = _turn_ids(harness.events)[-1]
    (record,) = _errors(caplog)
    message = record.getMessage()
    assert "openai: HTTP 503: overloaded" in message
    assert "conv-model" in message and turn in message
    assert "sk-hardening-0123456789" not in caplog.text
    assert "[redacted]" in message
    (ended,) = [e for e in harness.events if isinstance(e, TurnEnded) and e.turn_id == turn]
    assert "sk-hardening-0123456789" not in str(ended.metadata)


async def test_a_store_error_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    database = tmp_path / "keel.db"
    store = await open_store(f"sqlite:///{database}")
    # The database itself refuses the tool's record, as a full disk or a lost volume would.
    with sqlite3.connect(database) as connection:
        connection.execute(
            "CREATE TRIGGER no_tool_runs BEFORE INSERT ON events "
            "WHEN NEW.kind = 'tool_executed' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )
    script = ScriptedModel([ACTIVATE_COUNTER])
    harness = ConversationHarness(AGENT, script, store=store, conversation_id="conv-store")

    with caplog.at_level(logging.ERROR, logger="keel"):
        result = await harness.send("count")

    assert result.stop_reason == "error"
    turn = _turn_ids(harness.events)[-1]
    (record,) = _errors(caplog)
    message = record.getMessage()
    assert "store" in message and "conv-store" in message and turn in message
    assert record.exc_info is not None and isinstance(record.exc_info[1], StoreError)
    assert "disk on fire" in caplog.text and "Traceback" in caplog.text


async def test_a_store_error_in_the_log_carries_no_conversation_content(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The database driver's error names the statement, never its parameters (the event's
    JSON: what users said, memory values such as a PIN)."""
    database = tmp_path / "keel.db"
    store = await open_store(f"sqlite:///{database}")
    with sqlite3.connect(database) as connection:
        connection.execute(
            "CREATE TRIGGER no_user_messages BEFORE INSERT ON events "
            "WHEN NEW.kind = 'user_message' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )
    harness = ConversationHarness(AGENT, ScriptedModel([]), store=store, conversation_id="c-pii")

    with caplog.at_level(logging.ERROR, logger="keel"), pytest.raises(StoreError) as raised:
        await harness.send("my PIN is 4711-SECRET")

    assert "disk on fire" in str(raised.value)
    assert "4711-SECRET" not in str(raised.value)
    assert "4711-SECRET" not in caplog.text
