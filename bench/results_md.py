"""`bench/RESULTS.md`: each benchmark rewrites its own `## Title` section and no other.

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/, once per script
from results_md import write_section
"""

from __future__ import annotations

import re
from pathlib import Path

INTRO = """\
# Benchmarks

Numbers measured on a real machine, with the exact command that produced them, so anyone
can run them again and compare. Each section is rewritten by its script; the numbers
depend on the machine, so compare rows of one run with each other rather than with
another machine's.
"""


def write_section(path: Path, title: str, body: str) -> None:
    """Put `## title` with `body` into `path` (re-read just now; created with an intro),
    replacing the section of that title or appending it; other sections stay as they are."""
    text = path.read_text(encoding="utf-8") if path.exists() else INTRO
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _match: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text, encoding="utf-8")
