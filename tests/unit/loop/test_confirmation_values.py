"""What a confirmation question's placeholders read from the held call."""

from __future__ import annotations

from keel.loop.tools_run import confirmation_values


def test_each_argument_by_name_and_the_call_as_a_whole() -> None:
    values = confirmation_values("cancel_pending_order", {"order_id": "#W2", "items": [1, 2]})
    assert values["order_id"] == "#W2"
    assert values["items"] == "[1, 2]"
    assert values["tool"] == "cancel_pending_order"
    assert values["arguments"] == "order_id: #W2, items: [1, 2]"


def test_an_empty_argument_is_empty_and_an_argument_named_tool_wins() -> None:
    values = confirmation_values("t", {"order_id": "", "tool": "drill"})
    assert values["order_id"] == ""  # filled with nothing: the question is withheld
    assert values["tool"] == "drill"
    assert confirmation_values("t", {})["arguments"] == "no arguments"
