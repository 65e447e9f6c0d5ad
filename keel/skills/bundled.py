"""The default skills and engine responses Keel ships as package data.

`keel/skills/defaults/<skill_id>/skill.md` holds each bundled skill and
`keel/skills/defaults/responses.yml` the engine responses they (and the engine) use. A
project skill with the same id replaces a bundled one, and a project response with the
same name replaces a bundled response; the project builder applies both rules.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

from keel.errors import DefinitionError
from keel.skills.model import SkillDocument
from keel.skills.parse import parse_skill
from keel.source.diagnostics import has_errors

BUNDLED_PREFIX = "keel/skills/defaults"
"""How bundled files are named in documents and diagnostics."""


def defaults_root() -> Traversable:
    """The folder of bundled default skills."""
    return files("keel.skills").joinpath("defaults")


def default_responses_file() -> Traversable:
    """The bundled engine `responses.yml` (top key `responses:`)."""
    return defaults_root().joinpath("responses.yml")


def read_default_responses() -> str:
    """Text of the bundled engine `responses.yml`."""
    return default_responses_file().read_text(encoding="utf-8")


def load_default_skills() -> tuple[SkillDocument, ...]:
    """Every bundled default skill, sorted by id.

    Raises `DefinitionError` if a bundled file does not parse cleanly: that is a bug in
    Keel, not an authoring mistake, so it must not pass silently.
    """
    documents: list[SkillDocument] = []
    folders = sorted((p for p in defaults_root().iterdir() if p.is_dir()), key=lambda p: p.name)
    for folder in folders:
        skill_md = folder.joinpath("skill.md")
        if not skill_md.is_file():
            continue
        file = f"{BUNDLED_PREFIX}/{folder.name}/skill.md"
        document, diagnostics = parse_skill(folder.name, skill_md.read_text("utf-8"), file)
        if document is None or has_errors(diagnostics):
            raise DefinitionError(diagnostics)
        documents.append(document)
    return tuple(documents)
