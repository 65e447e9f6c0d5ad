"""docs/project-format.md shows the `support` template of `keel init` ("Parcel Help").

Every fenced block headed by `<!-- file: <path> -->` must be that template file word for
word, and the page must show the project's main files; `tests/cli/test_init_graph.py`
checks that the template validates and passes its tests.
"""

from __future__ import annotations

import re
from pathlib import Path

from keel.cli.init_cmd import template_files

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "project-format.md"
SNIPPET = re.compile(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```", re.S)
SHOWN = {
    "agent.yml",
    "integrations.yml",
    "memory.yml",
    "responses.yml",
    "skills/redirect_parcel/memory.yml",
    "skills/redirect_parcel/skill.md",
    "skills/redirect_parcel/tools.py",
    "tools/parcels.py",
}


def _snippets() -> list[tuple[str, str]]:
    return SNIPPET.findall(DOC.read_text(encoding="utf-8"))


def test_every_file_snippet_is_the_template_file() -> None:
    files = template_files("support")
    for rel, text in _snippets():
        assert rel in files, f"{rel}: no such file in the support template"
        assert text == files[rel].decode("utf-8"), f"{rel}: the doc and the template differ"


def test_the_page_shows_the_projects_main_files_once() -> None:
    names = [rel for rel, _ in _snippets()]
    assert sorted(names) == sorted(SHOWN)
