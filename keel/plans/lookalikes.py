"""Lookalike characters made plain before a request's ids are read (plan-cache spec §3.6).

    plain("cancel #\\u051c\\uff19\\uff14\\u200b7")  -> "cancel #W947"

A request can spell an id with characters that look like Latin letters and digits but are
not: Cyrillic and Greek letters (Cyrillic WE, O, Greek ALPHA), fullwidth forms, zero-width
characters inside a token. Read as written, such an id is no id (the extractors look for
Latin letters and digits), so it would go unseen by the binder's checks. `plain` gives the
text the binder reads: NFKC (fullwidth and compatibility forms), format characters (zero
width spaces and joiners, soft hyphens, bidi marks) removed, and in a token that mixes
scripts or holds a digit, each Cyrillic or Greek lookalike written as its Latin letter. A
word written wholly in another script (a Russian word) is left as it is. Pure.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

_PAIRS: Final = (
    # Cyrillic capitals
    (
        "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420"
        "\u0421\u0422\u0425\u0423\u0406\u0408\u0405\u051c"
        "\u051a",
        "ABEKMHOPCTXYIJSWQ",
    ),
    # Cyrillic small letters
    (
        "\u0430\u0435\u043e\u0440\u0441\u0445\u0443\u0456\u0458\u0455\u051d\u051b\u04bb\u0501",
        "aeopcxyijswqhd",
    ),
    # Greek capitals
    (
        "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
        "ABEZHIKMNOPTYX",
    ),
    # Greek small letters
    (
        "\u03b1\u03bd\u03bf\u03b9\u03c1\u03ba\u03c7\u03c5",
        "avoipkxu",
    ),
    # signs
    (
        "\u266f\u2317\ufe6b",
        "##@",
    ),
)
LOOKALIKES: Final = {a: b for look, latin in _PAIRS for a, b in zip(look, latin, strict=True)}
"""Lookalike -> Latin character (after NFKC, which handles fullwidth and styled forms)."""

_WORD: Final = re.compile(r"\S+")


def plain(text: str) -> str:
    """`text` as the binder reads it (see the module docstring); idempotent."""
    flat = "".join(c for c in unicodedata.normalize("NFKC", text) if not _format(c))
    return _WORD.sub(lambda m: _latin(m.group(0)), flat)


def has_lookalikes(text: str) -> bool:
    """Whether `plain` changes `text`."""
    return plain(text) != text


def _format(char: str) -> bool:
    """A zero-width or other format character (category Cf: ZWSP, ZWJ, soft hyphen, ...)."""
    return unicodedata.category(char) == "Cf"


def _latin(token: str) -> str:
    """The token with its lookalikes in Latin when it mixes scripts or holds a digit."""
    if not any(c in LOOKALIKES for c in token):
        return token
    latin = any("a" <= c.lower() <= "z" for c in token)
    if not (latin or any(c.isdigit() for c in token) or "#" in token or "@" in token):
        return token
    return "".join(LOOKALIKES.get(c, c) for c in token)
