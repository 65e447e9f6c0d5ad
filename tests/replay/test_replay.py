"""Replay (issue 3, third acceptance bullet): a conversation's stored events, replayed through
the same agent and script, reproduce the same events.

A multi-turn conversation runs through an agent with a scripted model, a fake clock and
sequential ids, stored in a real SQLite file. The replay takes the user messages out of the
stored log, sends them again with the same script through a fresh harness (fresh clock, ids
and SQLite file) and compares the two logs event by event as JSON. A different script must
give a different log, so the comparison can fail.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from keel.events.codec import dumps, encode_event, loads
from keel.events.fold import ConversationState, fold, state_to_json
from keel.events.model import (
    BotMessage,
    Event,
    ToolCallRefused,
    ToolExecuted,
    TurnEnded,
    UserMessage,
)
from keel.ids import FakeClock, SequentialIds
from keel.loop.result import TurnResult
from keel.project.definition import AgentDefinition
from keel.stores.sqlite import SqliteEventStore
from keel.testing import ConversationHarness, ScriptedModel, load_definition

ROOT = Path(__file__).resolve().parents[2]
SECONDS_BETWEEN_MESSAGES = 42.5
"""The fake clock moves this much before each message, so timestamps differ per turn."""

Reply = Mapping[str, object] | str


def _call(name: str, arguments: Mapping[str, object], text: str | None = None) -> Reply:
    return {"text": text, "tool_calls": [{"name": name, "arguments": dict(arguments)}]}


@dataclass(frozen=True, kw_only=True, slots=True)
class Conversation:
    """An agent, what the user says, what the model answers, and an answer that differs."""

    agent: Path
    messages: tuple[str, ...]
    script: tuple[Reply, ...]
    other_script: tuple[Reply, ...]
    """Same number of replies, different content: must give a different log."""
    expected_tools: tuple[str, ...]
    """Tools the conversation must have run (so the log is not trivially short)."""
    expected_refusals: tuple[str, ...] = ()
    """Codes of the `tool_call_refused` events the conversation must log."""


SUPPORT = Conversation(
    agent=ROOT / "examples" / "support",
    messages=(
        "my internet is down",
        "RD2 5XY",
        "I restarted it, still nothing",
        "set:session.report_outage.contact_channel=sms",
        "no thanks, bye",
    ),
    script=(
        _call("activate", {"target_id": "report_outage"}),
        _call("set_fields", {"fields": {"postcode": "RD2 5XY"}}),
        _call("set_fields", {"fields": {"issue_resolved": False}}, "Sorry it's still down."),
        "Thanks for calling Brightwave. Bye!",
    ),
    other_script=(
        _call("activate", {"target_id": "report_outage"}),
        _call("set_fields", {"fields": {"postcode": "RD2 5XY"}}),
        # The restart worked after all: no ticket, and the later button tap is stale.
        _call("set_fields", {"fields": {"issue_resolved": True}}, "Great news."),
        "Thanks for calling Brightwave. Bye!",
    ),
    expected_tools=("activate", "set_fields", "check_area_status", "open_fault_ticket"),
)

ADVERSARIAL = Conversation(
    agent=ROOT / "tests" / "adversarial" / "agent",
    messages=("open the vault", "keep 'milk'", "peek inside", "shred it all", "yes"),
    script=(
        _call("activate", {"target_id": "vault"}),
        "The vault is open.",
        _call("set_fields", {"fields": {"note": "milk"}}),
        "Kept.",
        _call("peek", {}),  # hidden by requires: refused, and the refusal is replayed too
        "I can't peek right now.",
        _call("shred", {}),
        "Shall I shred everything?",
        _call("resolve_tool_confirmation", {"confirmed": True}),
        "Shredded.",
    ),
    other_script=(
        _call("activate", {"target_id": "vault"}),
        "The vault is open.",
        _call("set_fields", {"fields": {"note": "milk"}}),
        "Kept.",
        _call("peek", {}),
        "I can't peek right now.",
        _call("shred", {}),
        "Shall I shred everything?",
        _call("resolve_tool_confirmation", {"confirmed": False}),
        "All right, I left it alone.",
    ),
    expected_tools=("activate", "set_fields", "shred", "resolve_tool_confirmation"),
    expected_refusals=("tool.requires_closed",),
)

CONVERSATIONS = [pytest.param(SUPPORT, id="support"), pytest.param(ADVERSARIAL, id="adversarial")]


@functools.cache
def _definition(agent: Path) -> AgentDefinition:
    return load_definition(agent)


@dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """One run of a conversation, with what the harness and the SQLite file hold after it."""

    stored: tuple[Event, ...]
    harness_events: tuple[Event, ...]
    state: ConversationState
    results: tuple[TurnResult, ...]


async def _run(
    conversation: Conversation, messages: Sequence[str], script: Sequence[Reply], db: Path
) -> Run:
    """Send `messages` with `script` through a fresh harness on a fresh SQLite file."""
    store = await SqliteEventStore.open(db)
    try:
        model = ScriptedModel(script)
        clock = FakeClock()
        harness = ConversationHarness(
            _definition(conversation.agent),
            model,
            store=store,
            clock=clock,
            ids=SequentialIds("id-"),
        )
        results = []
        for text in messages:
            clock.advance(SECONDS_BETWEEN_MESSAGES)
            results.append(await harness.send(text))
        model.assert_complete()
        stored = tuple(s.event for s in await store.read(harness.conversation_id))
        return Run(
            stored=stored,
            harness_events=harness.events,
            state=harness.state,
            results=tuple(results),
        )
    finally:
        await store.close()


def _json_lines(events: Sequence[Event]) -> list[str]:
    return [json.dumps(encode_event(e), sort_keys=True) for e in events]


def _user_texts(events: Sequence[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, UserMessage)]


@pytest.mark.parametrize("conversation", CONVERSATIONS)
async def test_replaying_stored_user_messages_reproduces_the_log(
    conversation: Conversation, tmp_path: Path
) -> None:
    original = await _run(
        conversation, conversation.messages, conversation.script, tmp_path / "original.db"
    )
    # The log is a real conversation: every message, tools run, bot replies, several turns.
    assert _user_texts(original.stored) == list(conversation.messages)
    ran = {e.tool_name for e in original.stored if isinstance(e, ToolExecuted)}
    assert set(conversation.expected_tools) <= ran
    assert sum(isinstance(e, BotMessage) for e in original.stored) >= len(conversation.messages)
    assert len({e.timestamp for e in original.stored}) == len(conversation.messages)
    refused = [e.code for e in original.stored if isinstance(e, ToolCallRefused)]
    assert refused == list(conversation.expected_refusals)

    replayed = await _run(
        conversation, _user_texts(original.stored), conversation.script, tmp_path / "replay.db"
    )
    assert _json_lines(replayed.stored) == _json_lines(original.stored)
    assert replayed.stored == original.stored
    assert replayed.state == original.state


@pytest.mark.parametrize("conversation", CONVERSATIONS)
async def test_stored_log_decodes_and_folds_to_the_final_state(
    conversation: Conversation, tmp_path: Path
) -> None:
    db = tmp_path / "conversation.db"
    run = await _run(conversation, conversation.messages, conversation.script, db)
    # Read the file again through a new store: what was persisted, not what is cached.
    store = await SqliteEventStore.open(db)
    try:
        conversations = await store.list_conversations()
        assert [c.conversation_id for c in conversations] == ["conversation-1"]
        stored = [s.event for s in await store.read("conversation-1")]
    finally:
        await store.close()
    assert stored == list(run.stored)
    decoded = loads(dumps(stored))
    assert decoded == stored
    assert fold(decoded) == run.state
    assert state_to_json(fold(decoded)) == state_to_json(run.state)
    assert run.state.last_seq == len(stored)
    assert run.state.status in ("idle", "paused")


@pytest.mark.parametrize("conversation", CONVERSATIONS)
async def test_a_different_script_gives_a_different_log(
    conversation: Conversation, tmp_path: Path
) -> None:
    original = await _run(
        conversation, conversation.messages, conversation.script, tmp_path / "original.db"
    )
    other = await _run(
        conversation,
        _user_texts(original.stored),
        conversation.other_script,
        tmp_path / "other.db",
    )
    first, second = _json_lines(original.stored), _json_lines(other.stored)
    assert first != second
    # The logs agree until the turn whose reply differs: the comparison is exact, not noisy.
    pairs = enumerate(zip(first, second, strict=False))
    differs = next((i for i, (a, b) in pairs if a != b), min(len(first), len(second)))
    turns_ended = sum(isinstance(e, TurnEnded) for e in original.stored[:differs])
    assert turns_ended >= 3


@pytest.mark.parametrize("conversation", CONVERSATIONS)
async def test_harness_events_are_the_stored_log(
    conversation: Conversation, tmp_path: Path
) -> None:
    """Each request's `TurnResult.events` (which the harness collects) is what it appended,
    including the session start that ran ahead of the first message."""
    run = await _run(conversation, conversation.messages, conversation.script, tmp_path / "c.db")
    assert run.harness_events == run.stored


async def test_first_reply_carries_the_session_start_greeting(tmp_path: Path) -> None:
    """User speaks first: the session-start greeting and the answer come in one result
    (spec §7.2), greeting first."""
    run = await _run(SUPPORT, SUPPORT.messages[:1], SUPPORT.script[:1], tmp_path / "c.db")
    greeting = next(e for e in run.stored if isinstance(e, BotMessage))
    assert greeting.text.startswith("Hi, I'm Wren")
    assert run.results[0].bot_messages[0] == greeting
