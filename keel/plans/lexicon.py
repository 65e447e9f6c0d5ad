"""Word tables and the tokeniser shared by the model-free parts of the plan cache.

The normaliser (`keel.plans.normalise`), the intent extractor (`keel.plans.intents`), the
typed extractors (`keel.plans.entities`) and the slot binder (`keel.plans.slots`) read a
request the same way: `tokens` splits on white space and trims sentence punctuation from
the edges of each token, keeping the characters of paths, globs, numbers and e-mails
(`/tmp/a.txt`, `*.pdf`, `1,000`, `bob@x.org` are one token each); a token's `norm` is its
case-folded text without apostrophes (`don't` -> `dont`). Token boundaries, never
substrings: `4` is not inside `40`. Pure tables and functions.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

_LEAD: Final = "\"'`([{<\u00ab\u201c\u2018,;:!?"
_TRAIL: Final = "\"'`)]}>\u00bb\u201d\u2019,;:!?."
_APOSTROPHES: Final = re.compile(r"['\u2019]")
_WHITE: Final = re.compile(r"\S+")


@dataclass(frozen=True, kw_only=True, slots=True)
class Token:
    """One token of a text, with its character span in that text."""

    text: str
    norm: str
    start: int
    end: int


def straight(text: str) -> str:
    """NFKC, curly quotes made straight."""
    plain = unicodedata.normalize("NFKC", text)
    return (
        plain.replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u201c", '"')
        .replace("\u201d", '"')
    )


def fold(text: str) -> str:
    """NFKC, case-folded, curly quotes made straight."""
    return straight(text).casefold()


def tokens(text: str) -> list[Token]:
    """The tokens of `text`, edge punctuation trimmed, empty ones dropped."""
    out: list[Token] = []
    for match in _WHITE.finditer(text):
        start, end = match.start(), match.end()
        while start < end and _lead_strip(text, start, end):
            start += 1
        while end > start and text[end - 1] in _TRAIL:
            end -= 1
        if start < end:
            raw = text[start:end]
            out.append(Token(text=raw, norm=_APOSTROPHES.sub("", fold(raw)), start=start, end=end))
    return out


def _lead_strip(text: str, start: int, end: int) -> bool:
    char = text[start]
    if char in _LEAD:
        return True
    if char == "." and (
        start + 1 >= end or not (text[start + 1].isalnum() or text[start + 1] in "./")
    ):
        return True
    return False


def words(text: str) -> list[str]:
    """The normalised tokens of `text`."""
    return [t.norm for t in tokens(text)]


# --- negation and polarity ---------------------------------------------------------------

VERB_NEGATIONS: Final = frozenset(
    {"not", "dont", "doesnt", "didnt", "never", "cannot", "cant", "wont", "shouldnt", "mustnt"}
    | {"non", "without", "mai", "senza"}
)
"""A cue in the few tokens before a verb marks the clause negated ("don't delete")."""

NEGATIONS: Final = VERB_NEGATIONS | frozenset(
    {"no", "none", "nothing", "neither", "nor", "except", "excluding", "unless", "isnt", "arent"}
    | {"né", "nessun", "nessuno", "nessuna", "niente", "nulla", "tranne", "eccetto", "salvo"}
)
"""Any of these changes the polarity of a request (binder polarity check)."""

ANTONYMS: Final[tuple[tuple[str, str], ...]] = (
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("include", "exclude"),
    ("including", "excluding"),
    ("read", "unread"),
    ("archive", "unarchive"),
    ("archived", "unarchived"),
    ("lock", "unlock"),
    ("show", "hide"),
    ("open", "close"),
    ("opened", "closed"),
    ("start", "stop"),
    ("allow", "deny"),
    ("allow", "block"),
    ("accept", "reject"),
    ("approve", "reject"),
    ("subscribe", "unsubscribe"),
    ("mute", "unmute"),
    ("before", "after"),
    ("older", "newer"),
    ("oldest", "newest"),
    ("above", "below"),
    ("more", "less"),
    ("most", "least"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("ascending", "descending"),
    ("increase", "decrease"),
    ("public", "private"),
    ("completed", "pending"),
    ("done", "undone"),
    ("paid", "unpaid"),
    ("visible", "hidden"),
    ("online", "offline"),
    ("yes", "no"),
    *(("attiva", "disattiva"), ("attivare", "disattivare"), ("attivo", "disattivo")),
    *(("attivato", "disattivato"), ("abilita", "disabilita"), ("abilitato", "disabilitato")),
    *(("accendi", "spegni"), ("includi", "escludi"), ("incluso", "escluso")),
    *(("inclusi", "esclusi"), ("incluse", "escluse")),
    *(("aperto", "chiuso"), ("aperti", "chiusi"), ("aperte", "chiuse")),
    *(("prima", "dopo"), ("più", "meno"), ("vecchi", "nuovi"), ("sì", "no")),
    *(("completati", "aperti"), ("completate", "aperte"), ("fatti", "aperti")),
)
"""Word pairs of opposite meaning, (plain, marked). A polarity change between two requests:
the marked word said in one and not in the other ("show unread mail" / "show mail"), or
each says a different word of one pair ("enable X" / "disable X")."""

CORRECTIONS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(phrase.split())
    for phrase in (
        "no wait", "wait no", "no sorry", "sorry no", "sorry i meant", "sorry i mean",
        "i meant", "i mean", "scratch that", "just kidding", "kidding", "jk", "never mind",
        "nevermind", "forget it", "forget that", "on second thought", "on second thoughts",
        "changed my mind", "change of plan", "change of plans", "not this one",
        "not that one", "not this order", "not that order", "hold on", "instead", "rather",
        "actually", "keep it", "leave it", "my bad", "my mistake", "oops", "correction",
        "make that",
        # Italian
        "anzi", "no aspetta", "aspetta", "no scusa", "scusa no", "scusa intendevo",
        "intendevo", "volevo dire", "lascia perdere", "lascia stare", "non importa",
        "ci ho ripensato", "ripensandoci", "invece", "scherzavo", "stavo scherzando",
        "come non detto", "non questo", "non quello", "non quest", "tienilo", "lascialo",
        "cioè",
    )
)  # fmt: skip
"""Words that correct, retract or replace what the request (or the turn before) said:
"..., no wait, don't", "not this one, order X", "just kidding, keep it", "anzi, ...". A
request that says one is never served from the cache (`keel.plans.clauses`)."""

LONE_CORRECTIONS: Final = frozenset({"wait", "no", "nope", "nah", "stop", "aspetta", "fermo"})
"""A clause of only one of these words retracts the clause before it ("cancel it, no.")."""

NEGATION_IDIOMS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(phrase.split())
    for phrase in (
        "no longer", "not anymore", "no need", "not needed", "not need", "dont need",
        "do not need", "doesnt need", "not working", "not work", "doesnt work", "dont work",
        "isnt working", "not arrived", "never arrived", "nothing arrived", "hasnt arrived",
        "havent received", "not received", "never received", "nothing came", "never came",
        "not delivered", "never delivered", "not happy", "not satisfied", "not as described",
        "not fit", "doesnt fit", "dont like", "not want", "dont want", "no good",
        "not right", "not correct", "not the right", "no one", "not sure", "no problem",
        "not yet",
        # Italian
        "non più", "non serve", "non mi serve", "non servono", "non funziona",
        "non è arrivato", "non arrivato", "mai arrivato", "niente è arrivato",
        "non ne ho bisogno", "non lo voglio", "non mi piace", "non va bene",
    )
)  # fmt: skip
"""Negations that belong to a value, not to the request: "I no longer need it", "it is not
working", "nothing arrived" say why, and negate no verb of the request (one of the retail
store's two cancellation reasons is "no longer needed")."""

ID_NOUNS: Final = frozenset(
    {"order", "orders", "ticket", "tickets", "invoice", "invoices", "account", "item"}
    | {"number", "no", "nr", "id", "ref", "reference", "booking", "reservation", "case"}
    | {"ordine", "ordini", "fattura", "numero", "pratica", "prenotazione", "codice"}
)
"""Nouns after which a bare number is an id ("order 12", "ticket no. 5")."""

SEPARATORS: Final = frozenset({"and", "then", "but", "also", "or", "plus", "&", "after", "next"})
"""Words that separate clauses of a compound request."""

IT_SEPARATORS: Final = frozenset(
    {"e", "ed", "poi", "quindi", "ma", "anche", "o", "oppure", "inoltre", "infine", "dopo"}
)
"""Italian words that separate clauses ("trova ... e cancella ...")."""

DETERMINERS: Final = frozenset(
    {"the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "that"}
    | {"these", "those", "some", "any", "each", "every", "all"}
)

IT_DETERMINERS: Final = frozenset(
    {"il", "lo", "la", "i", "gli", "le", "l", "un", "uno", "una", "ogni", "qualche"}
    | {"mio", "mia", "miei", "mie", "tuo", "tua", "tuoi", "tue", "suo", "sua", "suoi", "sue"}
    | {"nostro", "nostra", "nostri", "nostre", "loro", "questo", "questa", "questi", "queste"}
    | {"quest", "quel", "quello", "quella", "quei", "quegli", "quelle", "quell", "tutto"}
    | {"tutta", "tutti", "tutte", "alcuni", "alcune", "del", "dello", "della", "dei", "degli"}
    | {"delle", "dell", "al", "allo", "alla", "ai", "agli", "alle", "all", "dal", "dallo"}
    | {"dalla", "dai", "dagli", "dalle", "dall", "nel", "nello", "nella", "nei", "negli"}
    | {"nelle", "nell", "sul", "sullo", "sulla", "sui", "sugli", "sulle", "sull"}
)
"""Italian articles, possessives, demonstratives and articled prepositions: a verb word
right after one is a noun ("le email" are messages, not a send)."""

IT_ELIDED: Final = re.compile(
    r"^(l|dell|nell|sull|all|dall|un|quest|quell|tutt|c|d|m|t|s|n|v)['\u2019](?=\w)", re.I
)
"""An elided Italian article or pronoun glued to its word (`l'ordine`, `dell'ordine`)."""


# --- singular and plural -------------------------------------------------------------------


def plural(word: str) -> str:
    """`file` -> `files`, `entry` -> `entries`, `box` -> `boxes`."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def singular(word: str) -> str:
    """`files` -> `file`, `entries` -> `entry`, `boxes` -> `box`; other words unchanged."""
    if word.endswith("ies") and len(word) > 3:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 2:
        return word[:-1]
    return word


def inflections(word: str) -> frozenset[str]:
    """The word, its singular and its plural."""
    base = singular(word)
    return frozenset({word, base, plural(base)})


# --- numbers and file types -----------------------------------------------------------------

NUMBER_WORDS: Final = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "fifty": 50,
    "hundred": 100,
}
"""Counts written as words (`one` is left out: "one of them", "no one")."""

FILE_TYPES: Final = {
    "pdf": "pdf",
    "text": "txt",
    "txt": "txt",
    "csv": "csv",
    "tsv": "tsv",
    "markdown": "md",
    "md": "md",
    "json": "json",
    "yaml": "yaml",
    "yml": "yml",
    "xml": "xml",
    "html": "html",
    "log": "log",
    "zip": "zip",
    "png": "png",
    "jpg": "jpg",
    "jpeg": "jpeg",
    "gif": "gif",
    "svg": "svg",
    "mp3": "mp3",
    "mp4": "mp4",
    "wav": "wav",
    "python": "py",
    "py": "py",
    "javascript": "js",
    "sql": "sql",
    "docx": "docx",
    "word": "docx",
    "xlsx": "xlsx",
    "excel": "xlsx",
    "pptx": "pptx",
    "powerpoint": "pptx",
}
"""File-type word -> extension: "PDFs", "pdf files", "text documents" give `*.pdf`, `*.txt`."""

PLURAL_TYPES: Final = frozenset(
    {"pdf", "csv", "tsv", "json", "xml", "html", "png", "jpg", "jpeg", "gif", "svg"}
    | {"mp3", "mp4", "wav", "docx", "xlsx", "pptx", "yaml", "zip"}
)
"""File types whose plural names files of that type ("PDFs", "CSVs", "PNGs")."""

EXTENSIONS: Final = frozenset(FILE_TYPES.values()) | frozenset(
    {"doc", "xls", "ppt", "htm", "gz", "tgz", "tar", "bz2", "7z", "rar", "js", "ts", "sh"}
    | {"toml", "ini", "cfg", "conf", "env", "rtf", "odt", "ods", "bak", "tmp", "webp", "heic"}
    | {"mov", "avi", "mkv", "flac", "ogg", "epub", "ics", "vcf", "eml", "msg", "c", "h", "rs"}
    | {"go", "java", "rb", "php", "css", "ipynb", "lock", "db", "sqlite", "parquet"}
)
"""Extensions that make `name.ext` a file name."""

FILE_OBJECTS: Final = frozenset(
    {"document", "doc", "image", "photo", "picture", "text", "spreadsheet", "report"}
)
"""Objects that live in files: `pdfs`, `documents` and `photos` may name a `files` object."""

OBJECT_SYNONYMS: Final[tuple[frozenset[str], ...]] = (
    frozenset({"file", "document", "doc"}),
    frozenset({"message", "email", "mail"}),
    frozenset({"event", "meeting", "appointment"}),
    frozenset({"task", "todo"}),
    frozenset({"image", "photo", "picture"}),
    frozenset({"folder", "directory", "dir"}),
)
"""Nouns that name the same kind of thing (singular forms)."""


# --- function words and courtesy ------------------------------------------------------------

STOPWORDS: Final = (
    DETERMINERS
    | IT_DETERMINERS
    | SEPARATORS
    | IT_SEPARATORS
    | frozenset(
        {"i", "me", "you", "he", "she", "it", "we", "they", "us", "them", "him", "mine"}
        | {"yours", "is", "are", "am", "was", "were", "be", "been", "do", "does", "did"}
        | {"have", "has", "had", "of", "in", "on", "at", "to", "for", "from", "by", "with"}
        | {"as", "if", "so", "no", "not", "yes", "ok", "okay", "mr", "mrs", "ms", "dr"}
        | {"io", "tu", "lui", "lei", "noi", "voi", "di", "da", "in", "con", "su", "per", "tra"}
        | {"fra", "non", "si", "sì", "ci", "mi", "ti", "vi", "ne", "che", "è", "sono", "ho"}
        | {"com", "org", "net", "www", "http", "https"}
    )
)
"""Function words: never a word that identifies someone (`keel.plans.provenance`)."""

COURTESY: Final = frozenset(
    {"please", "pls", "plz", "thanks", "thank", "thx", "ty", "cheers", "hi", "hello", "hey"}
    | {"ok", "okay", "great", "cool", "good", "morning", "afternoon", "evening", "dear"}
    | {"grazie", "mille", "ciao", "salve", "buongiorno", "buonasera", "favore", "perfavore"}
    | {"cortesia", "prego", "gentilmente", "kindly", "much", "lot", "lots", "so", "very"}
    | {"you", "a", "for", "your", "in", "advance", "again", "there", "the", "help", "now"}
    | {"asap", "soon", "quickly", "right", "away", "well", "oh", "um", "uh", "hmm", "yes"}
    | {"sure", "can", "could", "would", "will", "me", "per", "ti", "la", "subito", "adesso"}
)
"""Words of a courtesy or filler clause ("thanks", "please", "hi there", "thank you so
much", "grazie mille", "now"): such a clause asks nothing (`keel.plans.clause_cover`)."""
COURTESY_CORE: Final = frozenset(
    {"please", "pls", "plz", "thanks", "thank", "thx", "ty", "cheers", "hi", "hello", "hey"}
    | {"ok", "okay", "great", "cool", "morning", "afternoon", "evening", "grazie", "ciao"}
    | {"salve", "buongiorno", "buonasera", "favore", "perfavore", "prego", "gentilmente"}
    | {"kindly", "now", "asap", "soon", "quickly", "subito", "adesso", "sure", "well"}
)
"""A courtesy clause holds at least one of these ("for you" alone is not courtesy)."""
