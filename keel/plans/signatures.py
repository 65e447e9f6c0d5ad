"""Invalidation signatures of cached plans (plan-cache spec §1.7, §3.8).

* `tools_sig(plan, catalog)`: 16 hex over the sorted `tool:digest` of the tools the plan
  calls (a digest covers the tool's name, argument schema, contract and code), so a change
  to any tool the plan uses changes it and a change to another tool does not; "" when a
  tool is missing from the catalog (the entry is invalid).
* `pool_sig(intent, catalog)`: 16 hex over the candidate tool families of the intent's
  clauses: tools named `verb_object` or `verb_object_*` (object singular or plural); a
  producer verb (find, list, get, read) brings all four; an object that lives in files
  (images, documents) brings the `files`/`dirs` families; a clause whose object was not
  recognised brings every tool of its verb. An intent with no clauses (the extractor found
  no verb: "what's on my calendar today?", a request in another language) has no family
  to narrow to, so its pool is the whole catalog (the sorted tool names): any new tool
  retires the exact entries recorded without an intent. A new sibling tool changes it.
* `LOGIC_SIG`: 16 hex over the source text of the modules that decide what is cached and
  served (normaliser, lexicons, extractors, binder, compiler, validator, admission, these
  signatures), read through `importlib` when this module is imported. Editing any of them
  invalidates every entry; there is no hand-bumped epoch to forget (spec §1.18.5).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from typing import Final

from keel.plans.catalog import Catalog
from keel.plans.intent import Intent
from keel.plans.lexicon import FILE_OBJECTS, inflections, singular
from keel.plans.plan import Plan

PRODUCER_VERBS: Final = frozenset({"find", "list", "get", "read"})
FILE_FAMILIES: Final = ("files", "file", "dirs", "dir", "directories", "folders")

DECIDING_MODULES: Final = (
    "keel.plans.normalise",
    "keel.plans.lexicon",
    "keel.plans.entity",
    "keel.plans.entities",
    "keel.plans.dates",
    "keel.plans.intents",
    "keel.plans.intent_lexicon",
    "keel.plans.intent_words",
    "keel.plans.slots",
    "keel.plans.anchors",
    "keel.plans.bind_checks",
    "keel.plans.clauses",
    "keel.plans.lookalikes",
    "keel.plans.compiler",
    "keel.plans.slot_builder",
    "keel.plans.provenance",
    "keel.plans.signatures",
    "keel.plans.validator",
    "keel.plans.admission",
)
"""Modules whose source decides what is cached and what a hit serves."""


def tools_sig(plan: Plan, catalog: Catalog) -> str:
    """H(sorted `tool:digest` of the plan's tools); "" when one is not in the catalog."""
    parts: list[str] = []
    for name in plan.tools:
        tool = catalog.get(name)
        if tool is None:
            return ""
        parts.append(f"{name}:{tool.digest}")
    return _hash("tools/1", parts)


def pool_sig(intent: Intent, catalog: Catalog) -> str:
    """H(sorted candidate families of the intent's clauses in `catalog`); the whole
    catalog for an intent with no clauses."""
    if not intent.clauses:
        return _hash("pool/1", ["*", *sorted(catalog)])
    families: set[str] = set()
    for clause in intent.clauses:
        verbs = PRODUCER_VERBS if clause.verb in PRODUCER_VERBS else {clause.verb}
        objects = set(inflections(clause.object)) if clause.object else set()
        if singular(clause.object) in FILE_OBJECTS or clause.object in ("images", "texts"):
            objects |= set(FILE_FAMILIES)
        families |= {name for name in catalog if _in_family(name, verbs, objects)}
    return _hash("pool/1", sorted(families))


def _in_family(name: str, verbs: Iterable[str], objects: set[str]) -> bool:
    """`verb_object[_*]`; with no object, any tool of the verb."""
    head, _, tail = name.lower().partition("_")
    if head not in verbs or not tail:
        return False
    return not objects or any(tail == o or tail.startswith(o + "_") for o in objects)


def logic_sig(modules: Iterable[str] = DECIDING_MODULES) -> str:
    """H(source text of `modules`); a module that does not exist counts as `missing`."""
    parts: list[str] = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        get_source = getattr(loader, "get_source", None)
        source = get_source(name) if callable(get_source) else None
        parts.append(f"{name}:{_digest(source) if isinstance(source, str) else 'missing'}")
    return _hash("logic/1", parts)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _hash(tag: str, parts: Iterable[str]) -> str:
    payload = "\n".join([tag, *parts])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


LOGIC_SIG: Final = logic_sig()
"""`logic_sig()` of the running code, computed once at import."""


def logic_signature(version: str = "") -> str:
    """`LOGIC_SIG` with the deployment's planner version folded in (`CacheConfig.
    logic_version`: in the loop, a digest of the skill's text, the planner prompt and the
    model group), so a change to what the planner would propose retires the entries."""
    if not version:
        return LOGIC_SIG
    return hashlib.sha256(f"{LOGIC_SIG}|{version}".encode()).hexdigest()[:16]
