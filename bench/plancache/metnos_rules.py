"""Metnos's model-free rules, re-implemented from the spec (Part 1) for the baseline.

Normalisation and key (§1.5), the closed content-key query-specificity predicate (§1.5),
the cacheability and cache-worthiness checks (§1.5 "when a row is recorded"), digit/slug
substring grounding of mutating arguments (§1.8.1), required-verb coverage (§1.8.2), and
the validity signatures with the hand-maintained epoch (§1.7). Mutating steps are found
by tool-name prefix, as Metnos does. Pure functions over plan/1 plans.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping

from keel.plans.catalog import Catalog
from keel.plans.plan import Plan

STOP = frozenset(
    "a an the to in on for of at my me i show tell give list what which is are do does "
    "please can you il lo la i gli le un una di a da in su per con mostra mostrami dimmi "
    "elenca quali quale cosa che è sono".split()
)
CONTENT_KEYS = frozenset(
    "query query_text search name names content time_window time_windows path paths to cc "
    "bcc subject body title email domain summary attendees location description "
    "context".split()
)
GLOB_KEYS = frozenset({"pattern", "patterns", "glob"})
UNIVERSAL_GLOBS = frozenset({"", "*", "*.*", "**"})
MUTATING = ("delete", "move", "change", "send", "create", "set", "write", "share", "render")
MUTATING += ("compress",)
COUNTERS = ("deleted", "moved", "archived", "sent", "created", "cancelled")
PRODUCERS = frozenset({"find", "read", "get", "list"})
REQUIRED = PRODUCERS | {"send", "create", "write", "move", "delete", "share", "install"}
DESTRUCTIVE = frozenset({"delete", "move"})
VERB_CUES: dict[str, tuple[str, ...]] = {
    "delete": ("delete", "remove", "erase", "get rid", "clean up", "empty", "clear"),
    "send": ("send", "email ", "write to", "manda", "invia", "scrivi"),
    "create": ("create", "add ", "new task", "schedule", "book ", "crea", "aggiungi", "fissa"),
    "move": ("move", "sposta"),
    "list": ("list", "show", "what", "which", "elenca", "mostra", "quali"),
    "find": ("find", "search", "trova", "cerca"),
    "read": ("read ", "open ", "leggi", "apri"),
}
VERB_CUES["delete"] += ("elimina", "cancella", "svuota")
_REF = re.compile(r"\$\{[^{}]*\}")
_DIGITS = re.compile(r"\d+")
_SLUG = re.compile(r"[\w.-]+/[\w.-]+")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def normalise(text: str) -> str:
    """Lower-case, trailing punctuation off, whitespace collapsed, stop-list words dropped."""
    words = text.lower().strip().rstrip(".,;:!?").split()
    return " ".join(w for w in words if w not in STOP)


def text_key(text: str) -> str:
    """16 hex of SHA-256 of the normalised text (no language, user or intent in it)."""
    return hashlib.sha256(normalise(text).encode()).hexdigest()[:16]


def _literals(value: object, key: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        if not _REF.fullmatch(value):
            yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _literals(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _literals(v, key)
    elif value is not None and not isinstance(value, bool):
        yield key, str(value)


def is_query_specific(plan: Plan) -> bool:
    """A literal under a content key, or a non-universal glob (only L0 exact may serve it)."""
    for step in plan.tool_steps:
        for key, text in _literals(step.args):
            if not text:
                continue
            if key in CONTENT_KEYS or key.endswith("_contains"):
                return True
            if key in GLOB_KEYS and text not in UNIVERSAL_GLOBS:
                return True
    return False


def mutating(tool: str) -> bool:
    """Metnos's notion of a mutating step: the tool name starts with a mutating verb."""
    return tool.split("_", 1)[0] in MUTATING


def cacheable(plan: Plan, request: str) -> bool:
    """`_should_cache_plan` plus the ISO-date and real-step rules."""
    if not plan.tool_steps:
        return False
    lowered = request.lower()
    for step in plan.tool_steps:
        for key, text in _literals(step.args):
            if _ISO.search(text):
                return False
            content = key in CONTENT_KEYS or key in GLOB_KEYS or key.endswith("_contains")
            if key != "from_step" and not content:
                if any(run in lowered for run in _DIGITS.findall(text)):
                    return False
        if mutating(step.tool):
            for _, text in _literals(step.args):
                if (
                    ("/" in text or "\\" in text)
                    and "*" not in text
                    and text.lower() not in lowered
                ):
                    return False
    return True


def ungrounded(plan: Plan, request: str) -> bool:
    """Some digit run or owner/name slug of a mutating step's args is not in the request."""
    lowered = request.lower()
    for step in plan.tool_steps:
        if not mutating(step.tool):
            continue
        args = {k: v for k, v in step.plain_args().items() if k not in ("from_step", "from_steps")}
        text = _REF.sub("", json.dumps(args))
        for token in (*_DIGITS.findall(text), *_SLUG.findall(text)):
            if token.lower() not in lowered:
                return True
    return False


def request_verbs(request: str, clause_verbs: Iterable[str]) -> set[str]:
    """Canonical verbs cued in the request, plus the intent's clause verbs."""
    lowered = f" {request.lower()} "
    found = {v for v, cues in VERB_CUES.items() if any(c in lowered for c in cues)}
    return found | set(clause_verbs)


def dropped_verbs(plan: Plan, request: str, clause_verbs: Iterable[str]) -> set[str]:
    """Required verbs the plan does not cover (checked with >= 2 verbs or a destructive one)."""
    verbs = request_verbs(request, clause_verbs)
    if len(verbs) < 2 and not verbs & DESTRUCTIVE:
        return set()
    heads = {s.tool.split("_", 1)[0] for s in plan.tool_steps}
    missing = set()
    for verb in verbs & REQUIRED:
        covered = heads & PRODUCERS if verb in PRODUCERS else verb in heads
        if not covered:
            missing.add(verb)
    return missing


def tools_sig(plan: Plan, catalog: Catalog, epoch: str) -> str:
    """H(epoch + sorted tool:digest of the plan's tools); a missing tool is `!missing`."""
    parts = sorted(f"{t}:{catalog[t].digest if t in catalog else '!missing'}" for t in plan.tools)
    return _h(f"@epoch:{epoch}|" + "|".join(parts))


def pool_sig(clauses: Iterable[tuple[str, str]], catalog: Catalog) -> str:
    """H(the candidate families of the intent's clauses in the catalog)."""
    family: set[str] = set()
    for verb, obj in clauses:
        verbs = PRODUCERS if verb in PRODUCERS else {verb}
        for name in catalog:
            head, _, rest = name.partition("_")
            if head in verbs and (_stem(rest) == _stem(obj) or rest.startswith(obj + "_")):
                family.add(name)
    return _h("|".join(sorted(family)))


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") else word


def cache_worthy(plan: Plan, calls: Iterable[tuple[str, object]], skipped: Iterable[str]) -> bool:
    """No mutating step ran to no effect: skipped, or a success counter at zero."""
    if any(mutating(tool) for tool in skipped):
        return False
    for tool, output in calls:
        if mutating(tool) and isinstance(output, Mapping):
            counts = [output[c] for c in COUNTERS if isinstance(output.get(c), int)]
            if counts and max(counts) <= 0:  # type: ignore[type-var]
                return False
    return bool(plan.tool_steps)


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
