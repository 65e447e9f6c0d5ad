"""Project checks for the extractors: every gazetteer an `extract:` names can be read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keel.extract.gazetteers import GazetteerError, load_gazetteer
from keel.source.diagnostics import Diagnostic, diag

if TYPE_CHECKING:
    from keel.project.definition import AgentDefinition


def check_gazetteers(definition: AgentDefinition) -> list[Diagnostic]:
    """`memory.bad_extract` for each gazetteer file that is missing or unreadable."""
    out: list[Diagnostic] = []
    for field in definition.memory.fields:
        spec = field.extract
        if spec is None or spec.gazetteer is None:
            continue
        try:
            load_gazetteer(definition.root, spec.gazetteer)
        except GazetteerError as exc:
            message = f"`extract` of `{field.key}`: {exc}"
            out.append(diag("memory.bad_extract", field.file, field.line, message, key=field.key))
    return out
