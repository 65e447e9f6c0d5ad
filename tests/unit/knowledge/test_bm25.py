"""The small BM25: tokens, suffix folding, scores."""

from __future__ import annotations

import pytest

from keel.knowledge.bm25 import Bm25, stem, tokens


@pytest.mark.parametrize(
    ("words", "root"),
    [
        (["payment", "payments"], "payment"),
        (["charge", "charged", "charging", "charges"], "charg"),
        (["cancel", "cancelled", "canceled", "cancelling"], "cancel"),
        (["bill", "bills", "billing"], "bil"),
        (["speed", "speeds"], "speed"),
        (["plan", "plans", "planned"], "plan"),
        (["status"], "status"),
        (["address", "addresses"], "address"),
    ],
)
def test_suffix_folding(words: list[str], root: str) -> None:
    assert {stem(w) for w in words} == {root}


def test_tokens_drop_stop_words_and_punctuation() -> None:
    assert tokens("What is the LATE-payment fee, if I pay on the 15th?") == [
        "lat",
        "payment",
        "fee",
        "pay",
        "15th",
    ]


def test_scores_rank_by_term_weight_and_length() -> None:
    index = Bm25(
        [
            "Late payment fee: five pounds.",
            "Router lights and restarting the router.",
            "Payment methods: card, direct debit, bank transfer. Payment is due on the 14th.",
            "",
        ]
    )
    scores = index.scores("late payment")
    assert scores[0] > scores[2] > 0
    assert scores[1] == 0 and scores[3] == 0
    assert list(index.scores("nothing matches here")) == [0, 0, 0, 0]
    assert Bm25([]).scores("x").size == 0
