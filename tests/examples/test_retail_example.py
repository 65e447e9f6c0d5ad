"""The retail example agent validates and its conversation tests pass under `keel test`,
run as a user would (a subprocess, so the tools' process-wide database starts fresh)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from keel.project.load import load_project

ROOT = Path(__file__).resolve().parents[2]
RETAIL = ROOT / "examples" / "retail"


def _keel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "keel", *args], capture_output=True, text=True, check=False
    )


def test_retail_agent_validates_without_errors() -> None:
    # What `keel validate` reports; loading runs no tool, so the database is untouched.
    definition, diagnostics = load_project(RETAIL, env={"OPENAI_API_KEY": "sk-test"})
    assert definition is not None, [d.render() for d in diagnostics]
    assert not diagnostics, [d.render() for d in diagnostics]


WRITE_TOOLS = frozenset(
    {
        "cancel_pending_order",
        "modify_pending_order_items",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
    }
)


def test_every_write_tool_is_confirmed_and_gated_wherever_a_skill_has_it() -> None:
    definition, _ = load_project(RETAIL, env={"OPENAI_API_KEY": "sk-test"})
    assert definition is not None
    seen: set[str] = set()
    for skill in definition.skills.values():
        constraints = {c.tool: c for c in skill.document.tool_constraints}
        for name in WRITE_TOOLS & set(skill.tools):
            seen.add(name)
            constraint = constraints.get(name)
            assert constraint is not None, (skill.skill_id, name)
            confirmation = constraint.requires_confirmation
            assert confirmation is not None and confirmation.enabled, (skill.skill_id, name)
            # The gate that keeps the model from calling the tool itself.
            assert constraint.requires is not None, (skill.skill_id, name)
            assert f"session.{skill.skill_id}.submit == True" in constraint.requires.source
    assert seen == WRITE_TOOLS


def test_retail_conversation_tests_pass() -> None:
    result = _keel("test", str(RETAIL / "tests"))
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    passed = int(summary.split()[0])
    assert passed >= 21 and summary.endswith(" 0 failed"), summary


def test_demo_script_plays_the_readme_conversation() -> None:
    """`make run` without OPENAI_API_KEY serves the agent with this script."""
    script = RETAIL / "scripts" / "cancel_order.yml"
    messages = "\n".join(
        [
            "Hi, I'd like to cancel an order. My email is yusuf.rossi7301@example.com",
            "#W6247578",
            "1",
            "yes",
        ]
    )
    result = subprocess.run(
        [sys.executable, "-m", "keel", "chat", str(RETAIL), "--model", f"scripted:{script}"],
        input=messages + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bot: Order #W6247578 is cancelled, and the refund is on its way." in result.stdout
    assert "Is there anything else I can help you with, Yusuf Rossi?" in result.stdout
