"""`keel replay`: a stored conversation re-runs through the agent with its recorded model
replies and behaves the same; a log that does not match the agent shows a diff.

Real conversations are served here as `keel run` serves them: on the system clock, with
random ids and a provider model (over HTTP, from a local OpenAI-wire server) that reports
usage, with session metadata that seeds memory, across a session that expires, or with no
model at all; stored in a real SQLite file and replayed by the `keel replay` command.
Measurements (latency, stage timings, timestamps) differ from run to run: they are
reported apart and do not make the behaviour differ.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from keel.events.base import JsonValue
from keel.events.model import BotMessage, Event, ModelCalled, SessionStarted
from keel.ids import Clock, FakeClock, IdSource, SystemClock, UuidSource
from keel.llm.none import NoModel
from keel.llm.port import Model, Usage
from keel.server.model_spec import build_model
from keel.stores.sqlite import SqliteEventStore
from keel.testing import ConversationHarness, ScriptedModel, load_definition
from keel.testing.openai_wire_server import OpenAIWireServer, serve_project_models

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "support"
RETAIL = ROOT / "examples" / "retail"
SCRIPT = AGENT / "scripts" / "plan_change.yml"
MESSAGES = (
    "/session_start",
    "I'd like a faster plan",
    "BW100234",
    "4821",
    "yes, upgrade my plan",
    "set:session.change_plan.new_plan=fibre_500",
    "Yes",
)


async def _record(path: Path, conversation_id: str) -> None:
    store = await SqliteEventStore.open(path)
    try:
        harness = ConversationHarness(
            AGENT, ScriptedModel.from_file(SCRIPT), store=store, conversation_id=conversation_id
        )
        for text in MESSAGES:
            await harness.send(text)
        assert any(
            "You're on Fibre 500" in e.text for e in harness.events if isinstance(e, BotMessage)
        )
    finally:
        await store.close()


def _replay(path: Path, conversation_id: str, agent: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "keel",
            "replay",
            conversation_id,
            "--agent",
            str(agent),
            "--database-url",
            f"sqlite:///{path}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


async def test_replay_of_a_stored_conversation_gives_the_same_events(tmp_path: Path) -> None:
    db = tmp_path / "keel.db"
    await _record(db, "c-1")
    result = _replay(db, "c-1", AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("same behaviour")


async def test_replay_through_a_changed_agent_prints_a_diff(tmp_path: Path) -> None:
    db = tmp_path / "keel.db"
    await _record(db, "c-2")
    changed = tmp_path / "agent"
    import shutil

    shutil.copytree(AGENT, changed, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    responses = changed / "skills" / "change_plan" / "responses.yml"
    responses.write_text(responses.read_text().replace("Done! You're on", "All set, you're on"))
    result = _replay(db, "c-2", changed)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "-{" in result.stdout and "All set, you're on" in result.stdout
    assert result.stdout.strip().endswith("behaviour differs")


def _copy(agent: Path, target: Path) -> Path:
    shutil.copytree(agent, target, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    return target


def _priced(project: Path) -> None:
    """Give every model of the project a price, so its calls have a cost."""
    path = project / "integrations.yml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    for group in config["model_groups"]:
        for model in group["models"]:
            model.update(input_cost_per_token=0.000002, output_cost_per_token=0.000008)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


async def _serve(
    db: Path,
    agent: Path,
    model: Model,
    turns: Sequence[tuple[str, Mapping[str, JsonValue] | None]],
    *,
    clock: Clock,
    ids: IdSource,
    conversation_id: str = "c-real",
    pauses: Sequence[float] = (),
) -> tuple[Event, ...]:
    """Send `turns` (text, metadata) as `keel run` would; `pauses[n]` seconds pass on a
    `FakeClock` before turn n. Returns the stored log."""
    store = await SqliteEventStore.open(db)
    try:
        harness = ConversationHarness(
            load_definition(agent),
            model,
            store=store,
            clock=clock,
            ids=ids,
            conversation_id=conversation_id,
        )
        for n, (text, metadata) in enumerate(turns):
            if isinstance(clock, FakeClock) and n < len(pauses):
                clock.advance(pauses[n])
            await harness.send(text, metadata=metadata)
        return tuple(s.event for s in await store.read(conversation_id))
    finally:
        await store.close()


async def _serve_over_http(db: Path, agent: Path) -> tuple[Event, ...]:
    """The plan change, on the system clock, by the agent's own models (a local server
    that reports usage), the session started with metadata that seeds the customer id."""
    with OpenAIWireServer(usage=Usage(input_tokens=1234, output_tokens=56)) as server:
        serve_project_models(agent, server.base_url)
        _priced(agent)
        server.use(ScriptedModel.from_file(SCRIPT))
        model = build_model(None, load_definition(agent))
        turns = [("/session_start", {"customer_id": "BW100234", "channel": "web"})]
        return await _serve(
            db,
            agent,
            model,
            [*turns, *((text, None) for text in MESSAGES[1:])],
            clock=SystemClock(),
            ids=UuidSource(),
        )


def _last_line(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.strip().splitlines()[-1]


def _diff_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith(("-{", "+{"))]


async def test_a_conversation_served_on_the_system_clock_by_a_provider_replays_the_same(
    tmp_path: Path,
) -> None:
    agent = _copy(AGENT, tmp_path / "agent")
    db = tmp_path / "keel.db"
    stored = await _serve_over_http(db, agent)
    calls = [e for e in stored if isinstance(e, ModelCalled)]
    assert len(calls) == 7 and all(c.input_tokens == 1234 and c.cost for c in calls)
    assert any(c.latency_ms > 0 for c in calls)
    assert any("You're on Fibre 500" in e.text for e in stored if isinstance(e, BotMessage))
    result = _replay(db, "c-real", agent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _diff_lines(result) == []
    assert _last_line(result).endswith("same behaviour")
    # Latency and timings are reported apart; the stored usage was given back to the engine,
    # so tokens and cost are the same.
    measured = next(line for line in result.stdout.splitlines() if line.startswith("measure"))
    assert "model_called.latency_ms" in measured and "stages_timed.durations_ms" in measured
    assert "tokens" not in measured and "cost" not in measured


async def test_a_changed_response_still_differs_and_measurements_stay_out_of_the_diff(
    tmp_path: Path,
) -> None:
    agent = _copy(AGENT, tmp_path / "agent")
    db = tmp_path / "keel.db"
    await _serve_over_http(db, agent)
    responses = agent / "skills" / "change_plan" / "responses.yml"
    responses.write_text(responses.read_text().replace("Done! You're on", "All set, you're on"))
    result = _replay(db, "c-real", agent)
    assert result.returncode == 1, result.stdout + result.stderr
    diff = _diff_lines(result)
    assert any("All set, you're on" in line for line in diff if line.startswith("+"))
    assert any("Done! You're on" in line for line in diff if line.startswith("-"))
    assert not any("latency_ms" in line or "duration_ms" in line for line in diff)
    assert _last_line(result).endswith("behaviour differs")


async def test_session_metadata_seeded_memory_and_button_titles_are_replayed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "keel.db"
    title = {"button_title": "Fibre 500 (45.00 a month)"}
    turns: list[tuple[str, Mapping[str, JsonValue] | None]] = [
        ("/session_start", {"customer_id": "BW100234", "channel": "web"}),
        *((text, title if text.startswith("set:") else None) for text in MESSAGES[1:]),
    ]
    model = ScriptedModel.from_file(SCRIPT)
    await _serve(db, AGENT, model, turns, clock=FakeClock(), ids=UuidSource())
    result = _replay(db, "c-real", AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _last_line(result).endswith("same behaviour")


async def test_a_session_that_expired_between_messages_replays_with_its_new_session(
    tmp_path: Path,
) -> None:
    db = tmp_path / "keel.db"
    model = ScriptedModel.from_file(SCRIPT)
    turns = [(text, None) for text in MESSAGES[:4]] + [("/session_start", {"channel": "web"})]
    # The agent's sessions expire after 30 minutes idle: the last message comes after 47.
    pauses = (0.0, 3.2, 61.0, 7.5, 47 * 60.0)
    stored = await _serve(
        db, AGENT, model, turns, clock=FakeClock(), ids=UuidSource(), pauses=pauses
    )
    assert sum(isinstance(e, SessionStarted) for e in stored) == 2
    result = _replay(db, "c-real", AGENT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _last_line(result).endswith("same behaviour")


async def test_a_conversation_served_with_no_model_replays_with_no_model(tmp_path: Path) -> None:
    db = tmp_path / "keel.db"
    turns = [("/session_start", None), ("mia.moore8091@example.com", None)]
    stored = await _serve(db, RETAIL, NoModel(), turns, clock=SystemClock(), ids=UuidSource())
    assert any("Mia Moore" in e.text for e in stored if isinstance(e, BotMessage))
    result = _replay(db, "c-real", RETAIL)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _last_line(result).endswith("same behaviour")


def test_replay_of_an_unknown_conversation_is_a_clear_error(tmp_path: Path) -> None:
    result = _replay(tmp_path / "empty.db", "nope", AGENT)
    assert result.returncode == 2
    assert "no conversation 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
