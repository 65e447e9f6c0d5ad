"""Typed extractors: one value found, several (ambiguous), or none."""

from __future__ import annotations

from keel.extract import Ambiguous, Found, Missing
from keel.extract import extractors as ex
from keel.memory.extract_spec import parse_spec


def test_email_number_date_pattern() -> None:
    assert ex.emails("it's Ana.Silva@Example.com.") == Found(value="ana.silva@example.com")
    assert isinstance(ex.emails("a@b.io or c@d.io"), Ambiguous)
    assert ex.numbers("I need 3 of them") == Found(value=3)
    assert ex.numbers("order #W1234567 for ana@x.io") == Missing()
    assert ex.dates("on May 17, 2024 please") == Found(value="2024-05-17")
    assert ex.dates("2024-02-30") == Missing()
    assert ex.pattern("order w1234567 please", r"(#?W\d{7})\b") == Found(value="w1234567")


def test_enum_synonyms_longest_phrase_wins() -> None:
    values = ("no longer needed", "ordered by mistake")
    synonyms = {"no longer needed": ("not needed",), "ordered by mistake": ("by accident",)}
    assert ex.enum("It's no longer needed", values, synonyms) == Found(value="no longer needed")
    assert ex.enum("I got it by accident", values, synonyms) == Found(value="ordered by mistake")
    assert ex.enum("no idea", values, synonyms) == Missing()


def test_yes_no_and_gazetteer() -> None:
    assert ex.yes_no("Yes, please do") == Found(value=True)
    assert ex.yes_no("no, keep it") == Found(value=False)
    assert isinstance(ex.yes_no("yes... no"), Ambiguous)
    assert ex.gazetteer("I'm ana silva", ("Ana", "Bo")) == Found(value="Ana")


def test_spec_parsing_reports_problems() -> None:
    spec, problems = parse_spec({"pattern": r"\d{5}", "ask": "utter_ask_zip"})
    assert spec is not None and spec.kind == "pattern" and not problems
    assert parse_spec("email")[0] is not None
    assert parse_spec("colour")[1]
    assert parse_spec({"pattern": "("})[1]
    assert parse_spec({"gazetteer": "names.txt", "weird": 1})[1]
