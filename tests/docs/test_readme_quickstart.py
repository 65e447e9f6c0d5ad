"""The README's Python quickstart runs as printed and says what the README's chat shows.

The block after `<!-- quickstart -->` is written to a file and run by this interpreter
in a temporary folder that sees the repository's `examples/` (a symlink), so the
`.keel/quickstart.db` it writes lands there, not in the checkout.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
QUICKSTART = re.compile(r"<!-- quickstart -->\n```python\n(.*?)```", re.S)


def _quickstart() -> str:
    found = QUICKSTART.findall(README.read_text(encoding="utf-8"))
    assert len(found) == 1, "the README has one block after <!-- quickstart -->"
    return str(found[0])


def test_the_quickstart_is_short_and_uses_the_four_parts() -> None:
    code = _quickstart()
    body = code.split("async def main", 1)[1].split("asyncio.run(main())", 1)[0]
    assert len([line for line in body.splitlines() if line.strip()]) <= 10
    for part in ("load_project(", "Engine(", "open_store(", "ScriptedModel"):
        assert part in code


def test_the_quickstart_runs_and_prints_the_chat_of_the_readme(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "quickstart.py"
    script.write_text(_quickstart(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    readme = README.read_text(encoding="utf-8")
    assert printed[0].startswith("bot: Hi, I'm Wren from Brightwave Broadband.")
    assert printed[1:] == [
        "bot: Before I look at your account, I need to check it's really you.",
        "bot: What's your Brightwave account number? It starts with BW and is printed at "
        "the top of every bill.",
        "bot: Thanks. And your four-digit security PIN, please?",
        "bot: Thank you, Maya Lindqvist, you're verified.",
        "bot: Is there anything else I can help you with, Maya Lindqvist?",
    ]
    for line in printed[1:]:
        assert line in readme  # the same replies as the terminal chat shown above it
    assert (tmp_path / ".keel" / "quickstart.db").is_file()
