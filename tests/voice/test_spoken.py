"""The spoken form of bot messages: markdown stripped, buttons read as choices."""

from __future__ import annotations

import pytest

from keel.events.base import Button
from keel.events.model import BotMessage
from keel.loop.spoken import plain_text, read_choices, spoken_text


def _message(text: str, *titles: str) -> BotMessage:
    buttons = tuple(Button(title=t, payload=f"/{t.lower()}") for t in titles)
    return BotMessage(text=text, buttons=buttons, response_source="verbatim")


@pytest.mark.parametrize(
    ("markdown", "said"),
    [
        ("**Your order** has _shipped_.", "Your order has shipped."),
        (
            "# Steps\n1. Unplug the router\n2. Wait ten seconds",
            "Steps. Unplug the router. Wait ten seconds",
        ),
        ("- red\n- green", "red. green"),
        ("See [our help page](https://example.com/help) now.", "See our help page now."),
        ("Call us at https://example.com or `0800 123`.", "Call us at or 0800 123."),
        ("Great news 🎉!", "Great news!"),
        ("> quoted line", "quoted line"),
        ("| plan | price |\n| --- | --- |\n| Fibre | 30 |", "plan, price. Fibre, 30"),
        ("```\ncode\n```\nDone.", "code. Done."),
        ("***both***", "both"),
    ],
)
def test_markdown_is_reduced_to_its_words(markdown: str, said: str) -> None:
    assert plain_text(markdown) == said


def test_buttons_are_read_as_choices_and_payloads_never() -> None:
    assert spoken_text(_message("Anything else", "Yes", "No")) == "Anything else. Yes or No?"
    three = spoken_text(_message("Which plan?", "Basic", "Fibre 500", "**Giga**"))
    assert three == "Which plan? You can say: Basic, Fibre 500 or Giga."
    assert "/basic" not in three
    assert spoken_text(_message("Confirm?", "Go ahead")) == "Confirm? Go ahead?"
    assert spoken_text(_message("Hello there.")) == "Hello there."
    assert read_choices(["", "  "]) == ""
