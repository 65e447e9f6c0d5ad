"""Normalisation v2 and the L0 exact key (plan-cache spec §3.7)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.plans import normalise as normalise_module
from keel.plans.normalise import NORMALISER_VERSION, l0_key, normalise


def test_version_is_n3() -> None:
    assert NORMALISER_VERSION == "n3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Delete   TASK\t4 ", "delete task 4"),
        (
            "\uff24\uff25\uff2c\uff25\uff34\uff25\u3000\uff54\uff41\uff53\uff4b\u3000\uff14",
            "delete task 4",
        ),  # NFKC: full-width
        ("Straße", "strasse"),  # case-fold, not lower()
        ("List the files!", "list the files"),
        ("what's in my inbox?", "whats in my inbox"),
        ("don\u2019t delete it", "dont delete it"),
        ("\u201cquoted\u201d words, here; now.", "quoted words here now"),
    ],
)
def test_folds_case_width_space_and_punctuation(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /tmp/Projects/a_b-c.txt.", "open /tmp/Projects/a_b-c.txt"),
        ("open C:\\Users\\Ann\\notes.md", "open C:\\Users\\Ann\\notes.md"),
        ("find *.pdf and **/*.PY files", "find *.pdf and **/*.PY files"),
        ("mail bob.smith+x@example.org now", "mail bob.smith+x@example.org now"),
        ("sum 1,000 and 2.5 and -3", "sum 1,000 and 2.5 and -3"),
        ("task #40 at 10:30 for 50%", "task #40 at 10:30 for 50%"),
        ("apples,pears", "apples pears"),
        ("open ~/notes and .env", "open ~/notes and .env"),
    ],
)
def test_keeps_path_glob_number_email_characters(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_paths_and_file_names_keep_their_case() -> None:
    assert normalise("delete /tmp/A") != normalise("delete /tmp/a")
    assert normalise("open Report.PDF") != normalise("open report.pdf")
    assert normalise("OPEN the Report") == normalise("open the report")


@pytest.mark.parametrize(
    "polite",
    [
        "please delete task 4",
        "Please, can you delete task 4?",
        "could you please delete task 4, thanks",
        "hey, would you delete task 4 please",
        "I would like you to delete task 4",
        "can you please delete task 4 thank you",
    ],
)
def test_drops_politeness_and_request_fillers(polite: str) -> None:
    assert normalise(polite) == "delete task 4"


def test_show_me_is_a_request_filler() -> None:
    assert normalise("show me my orders") == "my orders"


def test_keeps_prepositions() -> None:
    assert normalise("move x to y") != normalise("move x in y")
    assert normalise("files from Projects") == "files from projects"


def test_keeps_negations() -> None:
    assert normalise("don't delete the files") != normalise("delete the files")
    assert normalise("do not delete task 4") == "do not delete task 4"
    assert normalise("never send it") == "never send it"


def test_filler_words_inside_other_words_stay() -> None:
    assert normalise("pleasant history hints") == "pleasant history hints"


def test_l0_key_is_hex_and_stable() -> None:
    key = l0_key("Delete task 4", lang="en", scope="agent")
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    assert key == l0_key("please delete task 4!", lang="EN", scope="agent")


def test_l0_key_separates_language_scope_and_text() -> None:
    key = l0_key("delete task 4", lang="en", scope="a")
    assert key != l0_key("delete task 4", lang="it", scope="a")
    assert key != l0_key("delete task 4", lang="en", scope="b")
    assert key != l0_key("delete task 40", lang="en", scope="a")
    assert key != l0_key("don't delete task 4", lang="en", scope="a")


def test_l0_key_includes_the_normaliser_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = l0_key("delete task 4", lang="en", scope="a")
    monkeypatch.setattr(normalise_module, "NORMALISER_VERSION", "n4")
    assert normalise_module.l0_key("delete task 4", lang="en", scope="a") != before


@given(st.text(max_size=80))
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@given(
    st.lists(
        st.sampled_from(["delete", "task", "4", "please", "/tmp/A", "*.pdf", "can", "you", ","]),
        max_size=12,
    )
)
def test_normal_form_has_single_spaces_and_no_edges(words: list[str]) -> None:
    out = normalise(" ".join(words))
    assert out == out.strip()
    assert "  " not in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Per favore, cancella il task #40", "cancella il task #40"),
        ("puoi cancellare il task 4?", "cancellare il task 4"),
        ("Mi potresti mostrare le email di oggi, grazie", "mostrare le email di oggi"),
        ("mi puoi elencare i file in /tmp/Progetti", "elencare i file in /tmp/Progetti"),
        ("Ciao! fammi vedere gli ordini per cortesia", "gli ordini"),
    ],
)
def test_italian_politeness_fillers_are_dropped(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_italian_negation_and_recipient_words_are_kept() -> None:
    assert normalise("non cancellare il task 4") != normalise("cancellare il task 4")
    assert normalise("mi mandi il file") != normalise("mandi il file")
    assert l0_key("per favore cancella il task 4", lang="it", scope="a") == l0_key(
        "cancella il task 4", lang="it", scope="a"
    )
