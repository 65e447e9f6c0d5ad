"""keel.speech.sentences: the pieces the TTS speaks one after another."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from keel.speech.sentences import split_sentences


def test_sentences_and_lines() -> None:
    text = "Hello there. Your order ships today!  Anything else?\nBye; thanks: done"
    assert split_sentences(text) == [
        "Hello there.",
        "Your order ships today!",
        "Anything else?",
        "Bye;",
        "thanks:",
        "done",
    ]


def test_long_pieces_are_cut_at_commas_then_spaces() -> None:
    text = "one, " * 30 + "end"
    pieces = split_sentences(text, max_chars=40)
    assert all(len(p) <= 40 for p in pieces)
    assert " ".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert split_sentences("x" * 90, max_chars=40) == ["x" * 40, "x" * 40, "x" * 10]


def test_nothing_to_say() -> None:
    assert split_sentences("") == []
    assert split_sentences(" ... \n !! ") == []


@given(st.text(max_size=400))
def test_no_word_is_lost(text: str) -> None:
    pieces = split_sentences(text, max_chars=50)
    assert all(0 < len(p) <= 50 for p in pieces)
    kept = "".join(c for p in pieces for c in p if c.isalnum())
    assert kept == "".join(c for c in text if c.isalnum())
