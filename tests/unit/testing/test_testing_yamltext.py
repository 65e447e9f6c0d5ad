"""Texts stay literal under text keys: `user: yes` is "yes", not True."""

from __future__ import annotations

import pytest

from keel.source.yaml import load_yaml
from keel.testing.yamltext import restore_texts


def _load(text: str) -> object:
    data, diagnostics = load_yaml(text, "t.yml")
    assert not diagnostics
    restore_texts(data, text)
    return data


@pytest.mark.parametrize(
    "written", ["yes", "No", "on", "OFF", "true", "1:30", "007", "3.0", "1e3", "42", ".inf"]
)
def test_plain_scalars_under_text_keys_are_restored(written: str) -> None:
    data = _load(f"- user: {written}\n- bot: {written}   # a comment\n")
    assert data == [{"user": written}, {"bot": written}]


def test_flow_mappings_and_nested_keys() -> None:
    data = _load(
        "steps:\n  - {user: yes, x: 1}\n  - bot:\n      buttons: [{title: No, payload: no}]\n"
    )
    assert data == {
        "steps": [{"user": "yes", "x": 1}, {"bot": {"buttons": [{"title": "No", "payload": "no"}]}}]
    }


def test_other_keys_keep_yaml_types() -> None:
    data = _load("assert:\n  memory: {a.b: yes, a.c: 1}\n  bot_count: 2\n")
    assert data == {"assert": {"memory": {"a.b": True, "a.c": 1}, "bot_count": 2}}


def test_quoted_and_real_strings_untouched() -> None:
    data = _load("- user: 'yes'\n- user: hello there\n- text: \"1:30\"\n")
    assert data == [{"user": "yes"}, {"user": "hello there"}, {"text": "1:30"}]


def test_unrecoverable_layout_keeps_the_value() -> None:
    # The value sits on the line after its key: not recovered, the parser will ask for quotes.
    data = _load("user:\n  yes\n")
    assert data == {"user": True}


def test_block_list_items_under_buttons_and_model() -> None:
    data = _load("bot:\n  buttons:\n    - Yes\n    - title: No\n  model:\n    - on\n    - 12\n")
    assert data == {"bot": {"buttons": ["Yes", {"title": "No"}], "model": ["on", "12"]}}


def test_flow_list_items_are_not_guessed() -> None:
    assert _load("buttons: [Yes, No]\n") == {"buttons": [True, False]}
