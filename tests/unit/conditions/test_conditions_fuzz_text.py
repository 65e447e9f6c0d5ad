"""Property tests: any text either parses or raises ConditionSyntaxError, nothing else."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.conditions import ERROR_CODES, ConditionSyntaxError, Outcome, evaluate, parse_condition

FUZZ = settings(max_examples=400, deadline=None, derandomize=True, database=None)


def _parses_or_rejects_cleanly(text: str) -> None:
    try:
        condition = parse_condition(text)
    except ConditionSyntaxError as error:
        assert error.code in ERROR_CODES
        assert 0 <= error.column <= len(text)
        assert error.message
        return
    assert condition.source == text
    assert evaluate(condition, lambda ref: None) in set(Outcome)


@FUZZ
@given(text=st.text(max_size=60))
def test_arbitrary_text_parses_or_raises_condition_syntax_error(text: str) -> None:
    _parses_or_rejects_cleanly(text)


@FUZZ
@given(
    text=st.text(
        alphabet="session.projectab _()=!<>-+'\"\\ 0123456789eE\nTrueNnotandor[]", max_size=50
    )
)
def test_condition_like_text_parses_or_raises_condition_syntax_error(text: str) -> None:
    _parses_or_rejects_cleanly(text)


PIECES = [
    "session", ".", "project", "a", "(", ")", "==", "!=", "<", ">=", "not", "and", "or",
    "True", "None", "'x'", '"y', "\\", "1", "-", "2.5e3", ".5", " ", "\n", "in", "is", "foo",
    "[", "]", "=", "+", ",", "lambda", "f", "'", "#", "\u00e9",
]  # fmt: skip


@FUZZ
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=16), joiner=st.sampled_from(["", " "]))
def test_token_soup_parses_or_raises_condition_syntax_error(pieces: list[str], joiner: str) -> None:
    _parses_or_rejects_cleanly(joiner.join(pieces))
