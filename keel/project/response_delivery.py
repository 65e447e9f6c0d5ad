"""The response registry and the delivery rule for variants (spec §9.1)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from keel.conditions import MemoryReader, Outcome, evaluate
from keel.project.response_model import Response, Variant
from keel.source.diagnostics import Diagnostic, diag


def merge_responses(
    bundled: Iterable[Response], project_files: Iterable[Iterable[Response]]
) -> tuple[Mapping[str, Response], list[Diagnostic]]:
    """Join every responses file into one registry keyed by name.

    `project_files` holds the responses of each project file (root first, then the skills).
    A project response named like a bundled engine response replaces it; the same name in
    two project files is `response.duplicate_name`, a warning at the second (the first is
    kept).
    """
    registry: dict[str, Response] = {r.name: r for r in bundled}
    owners: dict[str, Response] = {}
    diagnostics: list[Diagnostic] = []
    for responses in project_files:
        for response in responses:
            first = owners.get(response.name)
            if first is not None:
                diagnostics.append(_duplicate(first, response))
                continue
            owners[response.name] = response
            registry[response.name] = response
    return MappingProxyType(registry), diagnostics


def select_variant(response: Response, read: MemoryReader) -> Variant | None:
    """The variant to deliver now.

    Conditioned variants are tried in YAML order and the first whose condition is true
    wins; a condition that is false or cannot be evaluated (CLOSED) is skipped, and so is
    a variant whose condition did not parse. Otherwise the default (unconditioned)
    variant, which may sit anywhere; when every variant is unconditioned that is the
    first. None when nothing matches and there is no default: delivery fails closed.
    """
    fitting = fitting_variants(response, read)
    return fitting[0] if fitting else None


def fitting_variants(response: Response, read: MemoryReader) -> tuple[Variant, ...]:
    """Every variant that may be delivered now, in delivery order: the conditioned ones
    whose condition is true (YAML order), then the default. The first is `select_variant`'s
    choice; the ones after it are its fallbacks."""
    chosen = [
        variant
        for variant in response.variants
        if variant.condition is not None and evaluate(variant.condition, read) is Outcome.TRUE
    ]
    default = next((v for v in response.variants if v.is_default), None)
    return (*chosen, *((default,) if default is not None else ()))


def _duplicate(first: Response, second: Response) -> Diagnostic:
    where = f"{first.file}:{first.line}" if first.line is not None else first.file
    return diag(
        "response.duplicate_name",
        second.file,
        second.line,
        f"response `{second.name}` is already defined in {where}; names are global, so "
        "this definition is ignored (the first is used)",
        key=second.name,
        severity="warning",
    )
