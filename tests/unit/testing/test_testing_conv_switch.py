"""`conversation: <id>` steps: several conversations on one engine, store and model."""

from __future__ import annotations

import textwrap
from pathlib import Path

from keel.testing.conversation import run_test_file
from keel.testing.harness import make_harness

SUPPORT = Path(__file__).resolve().parents[3] / "examples" / "support"


def _run(tmp_path: Path, steps: str) -> list[str]:
    path = tmp_path / "t.yml"
    text = f"agent: {SUPPORT.as_posix()}\ntests:\n  - name: two\n    steps:\n"
    path.write_text(text + textwrap.indent(textwrap.dedent(steps), "      "), encoding="utf-8")
    return run_test_file(path, make_harness).lines()


def test_each_conversation_keeps_its_own_log_and_bot_count(tmp_path: Path) -> None:
    lines = _run(
        tmp_path,
        """\
        - user: /session_start
        - bot: "re:(?i)hi|hello|welcome"
        - conversation: customer-b
        - assert: {bot_count: 0, state: idle}
        - user: /session_start
        - bot: "re:(?i)hi|hello|welcome"
        - assert: {bot_count: 1}
        - conversation: conversation-1
        - assert: {bot_count: 1}
        """,
    )
    assert lines[0].startswith("PASS"), lines


def test_back_in_the_first_conversation_the_next_bot_check_is_its_second(
    tmp_path: Path,
) -> None:
    lines = _run(
        tmp_path,
        """\
        - user: /session_start
        - bot: "re:(?i)hi|hello|welcome"
        - conversation: customer-b
        - user: /session_start
        - conversation: conversation-1
        - bot: anything
        """,
    )
    assert "expected bot message #2, but the bot sent only 1" in "\n".join(lines)


def test_a_conversation_step_needs_an_id(tmp_path: Path) -> None:
    lines = _run(tmp_path, "- conversation: ''\n")
    assert "test.step.conversation" in "\n".join(lines)
