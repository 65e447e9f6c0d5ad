"""Okapi BM25 over a fixed set of texts (pure; no `rank-bm25`).

Tokens are lower-cased runs of letters and digits, English stop words removed, with a
small suffix folding (`payments` and `payment`, `charged` and `charge`, `cancelled` and
`cancel`) applied the same way to texts and queries. Scores use k1 = 1.2, b = 0.75 and
Lucene's non-negative idf, `ln(1 + (N - df + 0.5) / (df + 0.5))`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

K1 = 1.2
B = 0.75

_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve""".split()
)


def stem(word: str) -> str:
    """A light English suffix folding (not a full stemmer; the same on both sides)."""
    root = word
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if word.endswith(("ss", "us", "is", "eed")) and suffix in ("s", "ed"):
                break
            root = word[: len(word) - len(suffix)] + keep
            break
    if len(root) > 3 and root.endswith("e"):
        root = root[:-1]  # charge, charged, charging -> charg
    if len(root) > 3 and root[-1] == root[-2] and root[-1] not in "aeious":
        root = root[:-1]  # planned -> plan; bill, billing -> bil; cancelled -> cancel
    return root


_SUFFIXES = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def tokens(text: str) -> list[str]:
    """The index terms of `text`."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


class Bm25:
    """Term statistics of a corpus; `scores(query)` gives one score per text."""

    def __init__(self, texts: Sequence[str]) -> None:
        docs = [Counter(tokens(t)) for t in texts]
        self._docs = docs
        self._lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
        self._average = float(self._lengths.mean()) if docs else 0.0
        df: Counter[str] = Counter()
        for d in docs:
            df.update(d.keys())
        n = len(docs)
        self._idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> NDArray[np.float64]:
        """BM25 of every text for `query` (0 where no query term occurs)."""
        out = np.zeros(len(self._docs), dtype=np.float64)
        if not self._docs:
            return out
        norm = K1 * (1.0 - B + B * self._lengths / max(self._average, 1e-9))
        for term in set(tokens(query)):
            idf = self._idf.get(term)
            if idf is None:
                continue
            tf = np.array([d.get(term, 0) for d in self._docs], dtype=np.float64)
            out += idf * tf * (K1 + 1.0) / (tf + norm)
        return out
