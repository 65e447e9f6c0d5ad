"""A plain keyword search over the project's `references/**/*.md` (until real retrieval).

Files are split into sections at markdown headings; a section scores by how many of the
query's words (lower-cased, 3+ letters) it contains; the best three are returned. This is
an adapter (it reads files); results are sorted deterministically.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from keel.loop.prompt import KnowledgeSection

TOP_K = 3
_WORD = re.compile(r"[a-z0-9]{3,}")


def reference_files(root: Path) -> tuple[Path, ...]:
    """Every `references/**/*.md` of the project and its skills, sorted."""
    found = list(root.glob("references/**/*.md")) + list(root.glob("skills/*/references/**/*.md"))
    return tuple(sorted(found))


def has_knowledge(root: Path) -> bool:
    """The project has a knowledge base."""
    return bool(reference_files(root))


@lru_cache(maxsize=32)
def _sections(root: Path) -> tuple[KnowledgeSection, ...]:
    sections: list[KnowledgeSection] = []
    for path in reference_files(root):
        source = path.relative_to(root).as_posix()
        current: list[str] = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("#") and current:
                sections.append(KnowledgeSection(source=source, text="\n".join(current).strip()))
                current = []
            current.append(line)
        if current:
            sections.append(KnowledgeSection(source=source, text="\n".join(current).strip()))
    return tuple(s for s in sections if s.text)


def search(root: Path, query: str) -> tuple[KnowledgeSection, ...]:
    """The sections sharing the most query words (ties keep file order); none for no match."""
    words = set(_WORD.findall(query.lower()))
    scored = []
    for index, section in enumerate(_sections(root)):
        score = len(words & set(_WORD.findall(section.text.lower())))
        if score:
            scored.append((-score, index, section))
    return tuple(section for _, _, section in sorted(scored)[:TOP_K])
