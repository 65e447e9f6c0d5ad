"""`keel chat` with the agent's own (provider) models runs on the system clock, so the
model is told the real date; a scripted run keeps the fake clock, so a script written
against its date replays the same."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from keel.cli.chat_cmd import chat_clock
from keel.ids import FakeClock, SystemClock
from keel.testing import ScriptedModel
from keel.testing.openai_wire_server import OpenAIWireServer, serve_project_models

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail"
STAMP = re.compile(r"## Now\nIt is \w+ (\d{4}-\d\d-\d\d \d\d:\d\d)")


def test_provider_models_and_no_model_use_the_system_clock_a_script_the_fake_one() -> None:
    assert isinstance(chat_clock(None), SystemClock)
    assert isinstance(chat_clock("none"), SystemClock)
    scripted = chat_clock("scripted:examples/support/scripts/plan_change.yml")
    assert isinstance(scripted, FakeClock)
    assert scripted.now() == FakeClock().now()


async def test_a_provider_model_is_told_the_system_date(tmp_path: Path) -> None:
    agent = tmp_path / "retail"
    shutil.copytree(RETAIL, agent, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    with OpenAIWireServer() as server:
        serve_project_models(agent, server.base_url)
        server.use(ScriptedModel(["Hello! What can I do for you today?"]))
        before = datetime.now(UTC)
        chat = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "keel", "chat", str(agent)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        # The loop stays free while the chat runs: the server answers on it.
        out, err = await asyncio.wait_for(chat.communicate(b"hello\n/exit\n"), timeout=120)
        after = datetime.now(UTC)
        requests = server.requests
    assert chat.returncode == 0, err.decode()
    assert "bot: Hello! What can I do for you today?" in out.decode()
    assert len(requests) == 1
    # The time is in the request's closing system message (the prompt's volatile part).
    closing = requests[0].body["messages"][-1]
    assert closing["role"] == "system"
    system = closing["content"]
    found = STAMP.search(system)
    assert found is not None, system
    told = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    # The prompt shows minutes: the time told lies within the run, to the minute.
    assert before - timedelta(minutes=1) <= told <= after, (told, before, after)
