"""`keel replay`: a stored conversation re-runs through the agent with its recorded model
replies and gives the same events; a log that does not match the agent shows a diff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keel.events.model import BotMessage
from keel.stores.sqlite import SqliteEventStore
from keel.testing import ConversationHarness, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "support"
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
    assert result.stdout.strip().endswith("same events")


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
    assert result.stdout.strip().endswith("events differ")


def test_replay_of_an_unknown_conversation_is_a_clear_error(tmp_path: Path) -> None:
    result = _replay(tmp_path / "empty.db", "nope", AGENT)
    assert result.returncode == 2
    assert "no conversation 'nope'" in result.stderr
    assert "Traceback" not in result.stderr
