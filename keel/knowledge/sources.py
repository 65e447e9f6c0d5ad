"""Reading a project's reference documents (the file-system side of the knowledge index).

The documents are `references/**/*.md` of the project and `skills/<id>/references/**/*.md`
of each skill (skills whose folder starts with `_` are skipped, as the loader skips them),
all in one index. Sources are paths relative to the project root with forward slashes,
sorted, so chunk order and fingerprints do not depend on the file system's order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    """One reference file."""

    source: str
    """Path relative to the project root (`references/billing.md`)."""
    text: str

    @property
    def digest(self) -> str:
        """SHA-256 of the text (what the index fingerprint is built from)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def reference_files(root: Path) -> tuple[Path, ...]:
    """Every reference document of the project at `root`, sorted by relative path."""
    found = list(root.glob("references/**/*.md"))
    for skill in sorted(root.glob("skills/*/")):
        if not skill.name.startswith("_"):
            found.extend(skill.glob("references/**/*.md"))
    return tuple(sorted((p for p in found if p.is_file()), key=lambda p: _rel(root, p)))


def has_knowledge(root: Path) -> bool:
    """The project has a knowledge base (at least one reference document)."""
    return bool(reference_files(root))


def read_documents(root: Path) -> tuple[Document, ...]:
    """The reference documents' texts (undecodable bytes replaced, never an error)."""
    return tuple(
        Document(source=_rel(root, path), text=path.read_text(encoding="utf-8", errors="replace"))
        for path in reference_files(root)
    )


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
