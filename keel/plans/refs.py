"""The placeholder grammar of plan arguments (plan-cache spec §3.4), parsed once.

    ${stepN.path}      an earlier step's output (1-based), path segments: name, index, *,
                       @count, @brief
    ${RUNTIME:key}     actor, actor_email, lang, channel, turn_id, pref_<name>, now, today,
                       now_plus_<N>d|h, now_minus_<N>d|h
    ${FILLER:name}     a filler declared in the plan's `fillers`
    ${SLOT:name}       a slot declared in the plan's `slots` (bound from the request)
    ${MEMORY:ns.entry} a memory entry of the conversation the plan runs in (re-resolved
                       there: a value the recorded plan took from its own customer's memory)

`find_refs` locates refs in a string; `normalise_legacy` rewrites the 0-based
`${steps.N.x}` and the `{{stepN.x}}` forms into `${stepN.x}` at ingest, so nothing after
parsing sees another form. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

_REF: Final = re.compile(r"\$\{([^{}]*)\}")
_STEP: Final = re.compile(r"step([1-9][0-9]*)((?:\.[^.\s{}]+)*)")
_SEGMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*|[0-9]+|\*|@count|@brief")
_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MEMORY_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*")
_RUNTIME_KEY: Final = re.compile(
    r"actor|actor_email|lang|channel|turn_id|pref_[A-Za-z_][A-Za-z0-9_]*|now|today"
    r"|now_(?:plus|minus)_[0-9]+[dh]"
)
_LEGACY_ZERO: Final = re.compile(r"\$\{steps\.([0-9]+)((?:\.[^.\s{}]+)*)\}")
_LEGACY_BRACES: Final = re.compile(r"\{\{\s*step([1-9][0-9]*)((?:\.[^.\s{}]+)*)\s*\}\}")


@dataclass(frozen=True, kw_only=True, slots=True)
class StepRef:
    """`${stepN.path}`."""

    step: int
    path: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class RuntimeRef:
    """`${RUNTIME:key}`."""

    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class FillerRef:
    """`${FILLER:name}`."""

    name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class SlotRef:
    """`${SLOT:name}`."""

    name: str


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryRef:
    """`${MEMORY:namespace.entry}`."""

    key: str


@dataclass(frozen=True, kw_only=True, slots=True)
class BadRef:
    """Text inside `${...}` that is not a ref of the grammar."""

    text: str


Ref = StepRef | RuntimeRef | FillerRef | SlotRef | MemoryRef | BadRef


@dataclass(frozen=True, kw_only=True, slots=True)
class Located:
    """A ref found in a string, with its character span."""

    start: int
    end: int
    ref: Ref


def parse_ref(inner: str) -> Ref:
    """The ref written inside `${...}`."""
    if inner.startswith("MEMORY:"):
        key = inner[len("MEMORY:") :]
        return MemoryRef(key=key) if _MEMORY_KEY.fullmatch(key) else BadRef(text=inner)
    for prefix, kind in (("RUNTIME:", RuntimeRef), ("FILLER:", FillerRef), ("SLOT:", SlotRef)):
        if inner.startswith(prefix):
            name = inner[len(prefix) :]
            pattern = _RUNTIME_KEY if kind is RuntimeRef else _IDENT
            if pattern.fullmatch(name) is None:
                return BadRef(text=inner)
            return RuntimeRef(key=name) if kind is RuntimeRef else kind(name=name)  # type: ignore[call-arg]
    match = _STEP.fullmatch(inner)
    if match is None:
        return BadRef(text=inner)
    path = tuple(s for s in match.group(2).split(".") if s)
    if any(_SEGMENT.fullmatch(s) is None for s in path):
        return BadRef(text=inner)
    return StepRef(step=int(match.group(1)), path=path)


def find_refs(text: str) -> list[Located]:
    """Every `${...}` in `text`, in order."""
    if "${" not in text:
        return []
    return [
        Located(start=m.start(), end=m.end(), ref=parse_ref(m.group(1)))
        for m in _REF.finditer(text)
    ]


def full_ref(text: str) -> Ref | None:
    """The ref when `text` is exactly one ref (its value keeps its native type), else None."""
    found = find_refs(text)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(text):
        return found[0].ref
    return None


def refs_in(value: object) -> list[Ref]:
    """Every ref anywhere inside a JSON value (strings in lists and objects too)."""
    if isinstance(value, str):
        return [located.ref for located in find_refs(value)]
    if isinstance(value, Mapping):
        return [ref for item in value.values() for ref in refs_in(item)]
    if isinstance(value, list | tuple):
        return [ref for item in value for ref in refs_in(item)]
    return []


def normalise_legacy(text: str) -> str:
    """`${steps.N.x}` (0-based) and `{{stepN.x}}` rewritten as `${step<1-based>.x}`."""
    text = _LEGACY_ZERO.sub(lambda m: f"${{step{int(m.group(1)) + 1}{m.group(2)}}}", text)
    return _LEGACY_BRACES.sub(lambda m: f"${{step{m.group(1)}{m.group(2)}}}", text)


def render_ref(ref: Ref) -> str:
    """The canonical text of a ref."""
    if isinstance(ref, StepRef):
        return "${step" + str(ref.step) + "".join("." + s for s in ref.path) + "}"
    if isinstance(ref, RuntimeRef):
        return "${RUNTIME:" + ref.key + "}"
    if isinstance(ref, FillerRef):
        return "${FILLER:" + ref.name + "}"
    if isinstance(ref, SlotRef):
        return "${SLOT:" + ref.name + "}"
    if isinstance(ref, MemoryRef):
        return "${MEMORY:" + ref.key + "}"
    return "${" + ref.text + "}"
