"""keel.source.suggest: the close names a "did you mean" offers."""

from __future__ import annotations

from keel.source.suggest import close_names, did_you_mean


def test_the_issue_examples_find_their_names() -> None:
    assert did_you_mean("utter_ask_bookid", ["utter_greet", "utter_ask_book_id"]) == (
        "; did you mean `utter_ask_book_id`?"
    )
    assert close_names("renewabel", ["renew_loan", "search_catalog"]) == ["renew_loan"]
    assert close_names("descripton", ["name", "description", "requires"]) == ["description"]


def test_closest_first_at_most_three_case_ignored_never_the_name_itself() -> None:
    assert close_names("Order", ["orders", "order", "ordered", "orderly", "x"])[:1] == ["order"]
    assert len(close_names("abc", ["abd", "abe", "abf", "abg"])) == 3
    assert close_names("same", ["same"]) == []


def test_nothing_close_gives_no_suggestion() -> None:
    assert did_you_mean("zzz", ["lookup_order", "utter_greet"]) == ""
    assert did_you_mean("anything", []) == ""
