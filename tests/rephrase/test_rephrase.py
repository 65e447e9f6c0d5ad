"""Rephrasing (Mantle's `metadata.rephrase`, Rasa's `endpoints.yml` `nlg: {type: rephrase}`)
and the reading of `endpoints.yml`.

The conversation files here show the behaviour with scripted rephrase replies (and scripted
failures); the tests below add what a YAML file cannot: no model at all, the
`rephrase_timeout` budget against a model that never answers, and the diagnostics of
`endpoints.yml` (file, line, code, severity).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from keel.events.codec import dumps, loads
from keel.events.model import BotMessage, ModelCalled
from keel.llm.none import NoModel
from keel.llm.port import ModelRequest, ModelResponse
from keel.project.config import DEFAULT_REPHRASE_TIMEOUT, parse_agent_config
from keel.project.endpoints import parse_endpoints, read_endpoints
from keel.project.load import load_project
from keel.source.yaml import load_yaml
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.conversation import run_test_file
from keel.testing.conversation.parse_checks import parse_bot
from keel.testing.conversation.sink import Sink
from keel.testing.harness import load_definition, make_harness
from keel.testing.script_replies import InvalidReply, parse_reply

HERE = Path(__file__).resolve().parent
AGENTS = HERE / "agents"
TEST_FILES = sorted(HERE.glob("*.yml"))
VERBATIM_GREETING = "Welcome to the Harbour Hotel. How can I help?"


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_conversation_file_passes(path: Path) -> None:
    result = run_test_file(path, make_harness)
    lines = "\n".join(result.lines())
    assert not result.malformed, lines
    assert result.results, f"{path.name} ran no test"
    assert result.failed == 0, lines


def _bots(harness: ConversationHarness) -> list[BotMessage]:
    return [e for e in harness.events if isinstance(e, BotMessage)]


async def test_with_no_model_the_verbatim_text_is_sent() -> None:
    harness = ConversationHarness(AGENTS / "harbour", NoModel())
    result = await harness.send("/session_start")
    assert result.state.last_stop_reason == "end_turn"
    [greeting] = _bots(harness)
    assert (greeting.text, greeting.response_source) == (VERBATIM_GREETING, "verbatim")
    assert greeting.metadata["rephrase_fallback"] == {
        "code": "rephrase.no_model",
        "message": "no model configured",
    }
    assert not [e for e in harness.events if isinstance(e, ModelCalled)]


class _Silent:
    """A model that never answers (until the caller gives up)."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_the_rephrase_timeout_bounds_a_call_that_never_answers() -> None:
    definition = load_definition(AGENTS / "harbour")
    quick = replace(definition, config=replace(definition.config, rephrase_timeout=0.01))
    model = _Silent()
    harness = ConversationHarness(quick, model)
    result = await harness.send("/session_start")
    assert result.state.last_stop_reason == "end_turn"
    assert len(model.requests) == 1 and model.requests[0].tier == "router"
    [greeting] = _bots(harness)
    assert greeting.text == VERBATIM_GREETING
    assert greeting.metadata["rephrase_fallback"] == {
        "code": "rephrase.timeout",
        "message": "no answer within rephrase_timeout (0.01 s)",
    }


async def test_a_rephrased_message_keeps_its_verbatim_text_through_the_log() -> None:
    harness = ConversationHarness(AGENTS / "harbour", ScriptedModel(["Evening! How can I help?"]))
    await harness.send("/session_start")
    again = loads(dumps(harness.events))
    [greeting] = [e for e in again if isinstance(e, BotMessage)]
    assert greeting.response_source == "rephrased"
    assert greeting.text == "Evening! How can I help?"
    assert greeting.metadata["verbatim_text"] == VERBATIM_GREETING


async def test_a_rephrase_call_does_not_spend_the_turns_model_budget() -> None:
    definition = load_definition(AGENTS / "harbour")
    tight = replace(definition, config=replace(definition.config, max_turns=1))
    model = ScriptedModel(
        [
            "Evening!",
            {"tool_calls": [{"name": "activate", "arguments": {"target_id": "booking"}}]},
            "How many nights?",
        ]
    )
    harness = ConversationHarness(tight, model)
    await harness.send("/session_start")
    result = await harness.send("I'd like a room")
    assert result.state.last_stop_reason == "end_turn"
    assert [m.text for m in _bots(harness)] == ["Evening!", "How many nights?"]
    model.assert_complete()


# --- endpoints.yml --------------------------------------------------------------------------

HARBOUR_DIAGNOSTICS = [
    ("endpoints.yml", 3, "endpoints.nlg.rephrase_marked", "info"),
    ("endpoints.yml", 4, "endpoints.nlg.not_used", "info"),
    ("endpoints.yml", 6, "endpoints.not_used", "info"),
    ("endpoints.yml", 10, "endpoints.event_broker.used", "info"),
    ("endpoints.yml", 13, "endpoints.not_used", "warning"),
    ("endpoints.yml", 15, "endpoints.not_used", "info"),
    ("endpoints.yml", 17, "endpoints.unknown_key", "warning"),
]


def test_the_harbour_endpoints_are_reported_block_by_block() -> None:
    definition, diagnostics = load_project(AGENTS / "harbour")
    assert definition is not None, [d.render() for d in diagnostics]
    found = [(d.file, d.line, d.code, d.severity) for d in diagnostics]
    assert found == HARBOUR_DIAGNOSTICS, [d.render() for d in diagnostics]
    assert definition.endpoints.nlg.rephrase and not definition.endpoints.rephrase_all
    messages = {d.key: d.message for d in diagnostics}
    assert "event store" in messages["tracker_store"]
    assert "per-conversation locks" in messages["lock_store"]
    assert "in process" in messages["action_endpoint"]
    assert "router tier" in messages["llm"]


def test_rephrase_all_loads_quietly() -> None:
    definition, diagnostics = load_project(AGENTS / "every")
    assert definition is not None and definition.endpoints.rephrase_all
    assert diagnostics == []


def test_a_broken_endpoints_file_is_a_warning_and_the_project_loads() -> None:
    definition, diagnostics = load_project(AGENTS / "broken_endpoints")
    assert definition is not None, [d.render() for d in diagnostics]
    assert [(d.file, d.code, d.severity) for d in diagnostics] == [
        ("endpoints.yml", "yaml.syntax", "warning")
    ]
    assert diagnostics[0].line is not None
    assert diagnostics[0].message.endswith("(endpoints.yml is ignored)")
    assert not definition.endpoints.nlg.rephrase


def test_an_unreadable_endpoints_file_is_a_warning(tmp_path: Path) -> None:
    for name in ("agent.yml", "integrations.yml"):
        (tmp_path / name).write_text((AGENTS / "every" / name).read_text())
    (tmp_path / "endpoints.yml").write_bytes(b"nlg:\n  type: \xff\xfe\n")
    definition, diagnostics = load_project(tmp_path)
    assert definition is not None, [d.render() for d in diagnostics]
    assert [(d.file, d.code, d.severity) for d in diagnostics] == [
        ("endpoints.yml", "project.unreadable_file", "warning")
    ]


def _codes(text: str) -> list[tuple[int | None, str, str]]:
    _, diagnostics = read_endpoints(text)
    return sorted((d.line, d.code, d.severity) for d in diagnostics)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("- nlg\n", [(1, "endpoints.not_mapping", "warning")]),
        ("nlg: rephrase\n", [(1, "endpoints.nlg.bad_value", "warning")]),
        ("nlg:\n  type: template\n", [(2, "endpoints.nlg.unsupported", "warning")]),
        ("nlg:\n  url: http://nlg:5056\n", [(2, "endpoints.nlg.unsupported", "warning")]),
        (
            "nlg:\n  type: rephrase\n  rephrase_all: yes please\n",
            [
                (2, "endpoints.nlg.rephrase_marked", "info"),
                (3, "endpoints.nlg.bad_value", "warning"),
            ],
        ),
        (
            "nlg:\n  type: rephrase\n  rephrase_all: true\n  temperature: 0.3\n",
            [(4, "endpoints.unknown_key", "warning")],
        ),
        (
            "models:\n  url: http://x\nvector_store: {type: qdrant}\n",
            [
                (1, "endpoints.not_used", "info"),
                (3, "endpoints.not_used", "warning"),
            ],
        ),
        ("tracing:\n  type: langfuse\n", [(1, "endpoints.unknown_key", "warning")]),
    ],
)
def test_endpoints_findings(text: str, expected: list[tuple[int | None, str, str]]) -> None:
    assert _codes(text) == expected


def test_nothing_in_endpoints_yml_is_an_error() -> None:
    config, diagnostics = parse_endpoints(None)
    assert config.present and not config.nlg.rephrase and diagnostics == []
    for text in ("nlg: [1]\n", "{{{", "nlg:\n  type: 3\n", "7\n"):
        _, diagnostics = read_endpoints(text)
        assert diagnostics and all(d.severity != "error" for d in diagnostics), text


# --- agent.yml rephrase_timeout, the test language -----------------------------------------


def _agent(extra: str) -> tuple[object, list[tuple[str, str]]]:
    data, _ = load_yaml("agent:\n  persona: P\n" + extra, "agent.yml")
    config, diagnostics = parse_agent_config(data)
    return config, [(d.code, d.severity) for d in diagnostics]


def test_rephrase_timeout_is_read_from_agent_yml() -> None:
    config, found = _agent("rephrase_timeout: 1.5\n")
    assert found == [] and getattr(config, "rephrase_timeout", None) == 1.5
    config, found = _agent("")
    assert getattr(config, "rephrase_timeout", None) == DEFAULT_REPHRASE_TIMEOUT
    _, found = _agent("rephrase_timeout: 0\n")
    assert found == [("config.agent.bad_rephrase_timeout", "error")]


def test_a_bot_step_source_must_be_a_response_source() -> None:
    data, _ = load_yaml("bot: {text: hi, source: paraphrased}\n", "t.yml")
    sink = Sink("t.yml")
    assert parse_bot(data["bot"], 1, sink) is None
    assert [(d.code, d.line) for d in sink.diagnostics] == [("test.bot.invalid", 1)]
    expect = parse_bot({"source": "rephrased"}, 1, Sink("t.yml"))
    assert expect is not None and expect.source == "rephrased"


@pytest.mark.parametrize(
    "raw", [{"error": "boom"}, {"error": "timeout", "text": "x"}, {"error": 1}]
)
def test_a_scripted_failure_is_one_of_the_known_ones(raw: dict[str, object]) -> None:
    with pytest.raises(InvalidReply):
        parse_reply(raw)
