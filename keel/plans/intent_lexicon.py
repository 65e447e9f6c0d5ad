"""The verb and object lexicons an intent is read with, built from a catalog (English and
Italian verbs, their forms and clitics, nouns, split verbs such as "turn ... off")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from keel.plans.catalog import Catalog
from keel.plans.lexicon import (
    IT_SEPARATORS,
    OBJECT_SYNONYMS,
    PLURAL_TYPES,
    SEPARATORS,
    VERB_NEGATIONS,
    inflections,
    plural,
    singular,
)
from keel.plans.lexicon import words as phrase_words

Lexicon = dict[tuple[str, ...], tuple[str, ...]]

VERB_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("delete", "remove", "erase", "trash", "destroy", "get rid of", "wipe", "purge", "discard"),
    ("complete", "finish", "tick off", "check off", "cross off"),
    ("reopen", "re-open"),
    ("cancel", "call off", "abort", "revoke"),
    ("send", "email", "mail", "dispatch"),
    (
        *("list", "show", "find", "get", "search", "search for", "look up", "look for"),
        *("lookup", "fetch", "display", "retrieve", "locate", "check"),
    ),
    ("read", "open", "view"),
    ("create", "make", "add"),
    ("update", "change", "modify", "edit"),
    ("move", "relocate"),
    ("copy", "duplicate"),
    ("rename",),
    ("write", "save"),
    ("archive",),
    ("share",),
    ("install",),
    ("uninstall",),
    ("count", "how many", "number of"),
    ("summarize", "summarise", "sum up", "a summary of", "give me a summary of"),
    ("schedule", "book"),
    ("enable", "turn on", "activate", "switch on"),
    ("disable", "turn off", "deactivate", "switch off"),
    ("reply", "respond", "answer"),
    ("forward",),
    ("download",),
    ("upload",),
    ("restore", "recover", "undelete"),
    ("compress", "zip"),
    ("extract", "unzip"),
    ("approve", "accept"),
    ("reject", "decline"),
    ("sort", "order by"),
    ("filter",),
    ("translate",),
    ("print",),
    ("play",),
    ("pay",),
    ("refund", "reimburse", "give a refund", "issue a refund", "process a refund"),
    ("buy", "purchase"),
    ("return",),
    ("exchange", "swap"),
    ("remind", "remind me"),
)
"""Built-in synonym groups, the group's usual name first. Groups never mix operations
(archive is not delete, cancel is not delete)."""


def _are(*stems: str) -> tuple[str, ...]:
    """Imperative, infinitive and their clitic forms of Italian -are verbs: `cancell` ->
    cancella, cancellare, cancellali, cancellarli, ..."""
    ends = ("a", "are", *(f"{a}{c}" for a in ("a", "ar") for c in ("lo", "la", "li", "le")))
    return tuple(stem + end for stem in stems for end in ends)


def _ere(*forms: tuple[str, str, str]) -> tuple[str, ...]:
    """(imperative, infinitive, clitic stem) of -ere/-ire verbs: rimuovi, rimuovere,
    rimuovili, rimuoverli, ..."""
    clitics = ("lo", "la", "li", "le")
    return tuple(
        w
        for imp, inf, stem in forms
        for w in (imp, inf, *(imp + c for c in clitics), *(stem + c for c in clitics))
    )


IT_VERBS: Final[dict[str, tuple[str, ...]]] = {
    "delete": (
        *_are("cancell", "elimin", "svuot"),
        *_ere(("rimuovi", "rimuovere", "rimuover")),
        *("butta via", "buttare via", "sbarazzati di"),
    ),
    "complete": (*_are("complet"), *_ere(("finisci", "finire", "finir"))),
    "reopen": _ere(("riapri", "riaprire", "riaprir")),
    "cancel": (*_are("annull", "cancell"), *_ere(("disdici", "disdire", "disdir"))),
    "send": (*_are("invi", "mand"), *_ere(("spedisci", "spedire", "spedir"))),
    "list": (
        *_are("mostr", "elenc", "trov", "cerc", "visualizz", "controll", "verific"),
        *("fammi vedere", "mostrami", "dammi", "elencami", "trovami", "cercami"),
    ),
    "read": _ere(("leggi", "leggere", "legger"), ("apri", "aprire", "aprir")),
    "create": (*_are("cre"), *_ere(("aggiungi", "aggiungere", "aggiunger"))),
    "update": _are("aggiorn", "modific", "cambi"),
    "move": _are("spost"),
    "copy": _are("copi", "duplic"),
    "rename": _are("rinomin"),
    "write": (*_are("salv"), *_ere(("scrivi", "scrivere", "scriver"))),
    "archive": _are("archivi"),
    "share": _ere(("condividi", "condividere", "condivider")),
    "count": (*_are("cont"), "quanti", "quante", "il numero di"),
    "summarize": (
        *_ere(("riassumi", "riassumere", "riassumer")),
        *_are("riepilog", "sintetizz"),
        *("fai un riassunto di", "un riassunto di", "fammi un riassunto di"),
    ),
    "schedule": _are("pianific", "programm", "prenot", "fiss"),
    "enable": (*_are("attiv", "abilit"), *_ere(("accendi", "accendere", "accender"))),
    "disable": (*_are("disattiv", "disabilit"), *_ere(("spegni", "spegnere", "spegner"))),
    "reply": _ere(("rispondi", "rispondere", "risponder")),
    "forward": _are("inoltr"),
    "download": _are("scaric"),
    "upload": _are("caric"),
    "restore": _are("ripristin"),
    "compress": (*_are("zipp"), *_ere(("comprimi", "comprimere", "comprimer"))),
    "extract": (*_are("scompatt"), *_ere(("estrai", "estrarre", "estrar"))),
    "approve": _are("approv", "accett"),
    "reject": _are("rifiut"),
    "sort": _are("ordin"),
    "filter": _are("filtr"),
    "translate": _ere(("traduci", "tradurre", "tradur")),
    "print": _are("stamp"),
    "play": _ere(("riproduci", "riprodurre", "riprodur")),
    "pay": _are("pag"),
    "refund": (*_are("rimbors"), "fai un rimborso", "emetti un rimborso"),
    "buy": _are("compr", "acquist"),
    "return": _ere(("restituisci", "restituire", "restituir")),
    "exchange": _are("scambi"),
    "remind": (*_are("ricord"), "ricordami"),
}
"""Italian verbs by the first word of their English group: each stands for the catalog
verbs of that group. `cancella` is delete and cancel (the object decides: a file is
deleted, an order cancelled)."""

_IT_FORMS: Final = frozenset(w for forms in IT_VERBS.values() for w in forms)
IT_CLITICS: Final = frozenset(
    w
    for w in _IT_FORMS
    if w.endswith(("lo", "la", "li", "le")) and ({w[:-2], w[:-2] + "e"} & _IT_FORMS)
)
"""Italian verb forms that carry their object (`eliminali`): the next verb starts a clause."""

IT_NOUNS: Final[dict[str, tuple[str, ...]]] = {
    "message": ("messaggio", "messaggi", "email", "e-mail", "mail", "posta"),
    "file": ("file", "documento", "documenti"),
    "task": ("attività", "attivita", "compito", "compiti", "task"),
    "event": (
        *("evento", "eventi", "appuntamento", "appuntamenti", "impegno", "impegni"),
        *("riunione", "riunioni", "agenda", "calendario"),
    ),
    "order": ("ordine", "ordini"),
    "setting": ("impostazione", "impostazioni"),
    "feature": ("funzione", "funzioni", "funzionalità"),
    "image": ("immagine", "immagini", "foto", "fotografia", "fotografie"),
    "folder": ("cartella", "cartelle"),
    "customer": ("cliente", "clienti"),
    "contact": ("contatto", "contatti"),
    "note": ("nota", "note"),
    "invoice": ("fattura", "fatture"),
    "payment": ("pagamento", "pagamenti"),
    "product": ("prodotto", "prodotti"),
    "user": ("utente", "utenti"),
    "reminder": ("promemoria",),
    "report": ("rapporto", "rapporti", "report"),
}
"""Italian nouns by the English (singular) noun they name."""

SPLIT_VERBS: Final[tuple[tuple[frozenset[str], frozenset[str], str, bool], ...]] = (
    (frozenset({"mark"}), frozenset({"done", "complete", "completed", "finished"}),
     "complete", False),
    (frozenset({"mark"}), frozenset({"undone", "incomplete", "unfinished", "open"}),
     "reopen", False),
    (frozenset({"tick", "check", "cross"}), frozenset({"off"}), "complete", True),
    (frozenset({"turn", "switch"}), frozenset({"on"}), "enable", True),
    (frozenset({"turn", "switch"}), frozenset({"off"}), "disable", True),
    (frozenset({"segna", "segnare", "marca"}),
     frozenset({"fatto", "fatta", "fatti", "fatte", "completato", "completata", "completati",
                "completate", "finito", "finita", "concluso", "conclusa"}), "complete", False),
    (frozenset({"segna", "segnare", "marca"}),
     frozenset({"aperto", "aperta", "incompleto", "incompleta", "riaperto", "riaperta"}),
     "reopen", False),
)  # fmt: skip
"""(heads, particles, verb group, particle ends the clause): a verb said around its object.
A negation right before a `mark` particle swaps complete and reopen ("as not done")."""
_SPLIT_GAP: Final = 6
_CLAUSE_END: Final = SEPARATORS | {"please", "now", "again", "for", "too"}
_ANY_SEPARATOR: Final = SEPARATORS | IT_SEPARATORS
_SWAPPED: Final = {"complete": "reopen", "reopen": "complete"}

_STOP_PARTS: Final = frozenset(
    {"by", "to", "of", "in", "on", "for", "all", "new", "and", "from", "with", "the", "a", "my"}
)


def verb_lexicon(
    catalog: Catalog, synonyms: Mapping[str, Sequence[str]], *, lang: str = "en"
) -> Lexicon:
    """Phrase -> candidate verbs (catalog heads first). `lang` "it": the Italian groups,
    each word standing for the catalog verbs of its English group, and the catalog heads
    that are no Italian object word (`email` stays a noun)."""
    heads = sorted({t.verb for t in catalog.values()})
    out: dict[tuple[str, ...], list[str]] = {}
    nouns = object_lexicon(catalog, lang=lang) if lang == "it" else {}
    for head in heads:
        if (head,) not in nouns:
            _add(out, head, head)
    if lang != "it":
        for tool in catalog.values():
            for phrase in tool.contract.verbs:
                _add(out, phrase, tool.verb)
    extra = [(canon, *more) for canon, more in synonyms.items()]
    for group in [*VERB_GROUPS, *extra]:
        targets = [w for w in group if w in heads] or [group[0]]
        builtin = lang == "it" and group in VERB_GROUPS
        for phrase in IT_VERBS.get(group[0], ()) if builtin else group:
            for target in targets:
                _add(out, phrase, target)
    return {k: tuple(v) for k, v in out.items()}


def object_lexicon(catalog: Catalog, *, lang: str = "en") -> Lexicon:
    """Phrase -> candidate objects (whole tool-name tails first, then aliases; `lang`
    "it" adds the Italian nouns of each alias last)."""
    out: dict[tuple[str, ...], list[str]] = {}
    tails = sorted({t.object for t in catalog.values() if "_" in t.name})
    for tail in tails:
        _add(out, tail.replace("_", " "), tail)
    for tail in tails:
        parts = tail.split("_")
        for last in sorted(inflections(parts[-1])):
            _add(out, " ".join([*parts[:-1], last]), tail)
    for tail in tails:
        for part in tail.split("_"):
            if len(part) < 3 or part in _STOP_PARTS:
                continue
            for alias in _aliases(part):
                _add(out, alias, tail)
    if lang == "it":
        _add_italian(out, tails)
    return {k: tuple(v) for k, v in out.items()}


def _add_italian(out: dict[tuple[str, ...], list[str]], tails: list[str]) -> None:
    """The Italian nouns of each tail's English aliases (`ordini` for `orders`)."""
    for tail in tails:
        for part in tail.split("_"):
            for alias in sorted(_aliases(part)):
                for noun in IT_NOUNS.get(alias, ()):
                    _add(out, noun, tail)


def _aliases(part: str) -> set[str]:
    base = singular(part)
    names = {base}
    for group in OBJECT_SYNONYMS:
        if base in group:
            names |= group
    if base == "file":
        names |= PLURAL_TYPES  # "PDFs": the glob entity keeps the type apart
    return {form for name in names for form in (*inflections(name), plural(name))}


def _add(out: dict[tuple[str, ...], list[str]], phrase: str, target: str) -> None:
    key = tuple(phrase_words(phrase))
    if not key:
        return
    found = out.setdefault(key, [])
    if target not in found:
        found.append(target)


def split_verb(said: Sequence[str], i: int) -> tuple[str, int] | None:
    """(verb group, index of the particle) when `said[i]` opens a split verb."""
    for heads, particles, verb, at_end in SPLIT_VERBS:
        if said[i] not in heads:
            continue
        for j in range(i + 1, min(len(said), i + 2 + _SPLIT_GAP)):
            if said[j] in _ANY_SEPARATOR:
                break
            if said[j] not in particles:
                continue
            if at_end and j + 1 < len(said) and said[j + 1] not in _CLAUSE_END:
                continue
            negated = said[j - 1] in VERB_NEGATIONS
            if negated and verb not in _SWAPPED:
                break
            return (_SWAPPED[verb] if negated else verb), j
    return None
