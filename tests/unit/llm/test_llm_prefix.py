"""keel.llm.prefix: the shared prefix of two serialised requests, and the cache key."""

from __future__ import annotations

import pytest

from keel.llm.port import ModelRequest, ToolSchema, system_message, user_message
from keel.llm.prefix import cache_key, prefix_share, request_text, shared_prefix_length


@pytest.mark.parametrize(
    ("previous", "current", "shared"),
    [
        ("", "", 0),
        ("abc", "", 0),
        ("", "abc", 0),
        ("abc", "abc", 3),
        ("abcdef", "abc", 3),
        ("abc", "abcdef", 3),
        ("abXdef", "abYdef", 2),
        ("Xbc", "Ybc", 0),
    ],
)
def test_shared_prefix_length(previous: str, current: str, shared: int) -> None:
    assert shared_prefix_length(previous, current) == shared


def test_prefix_share_is_the_part_of_the_current_request_that_repeats() -> None:
    assert prefix_share("abcd", "abcdefgh") == 0.5
    assert prefix_share("abcdefgh", "abcd") == 1.0
    assert prefix_share("x", "") == 0.0


def test_request_text_puts_tools_first_and_changes_where_the_request_does() -> None:
    tool = ToolSchema(name="lookup", description="Find.", parameters={"type": "object"})
    one = ModelRequest(messages=(system_message("S"), user_message("hi")), tools=(tool,))
    two = ModelRequest(messages=(system_message("S"), user_message("ho")), tools=(tool,))
    first, second = request_text(one), request_text(two)
    assert first.startswith('{"name": "lookup"')
    assert first[: shared_prefix_length(first, second)].endswith('"content": "h')


def test_cache_key_is_stable_per_conversation_and_hides_its_id() -> None:
    key = cache_key("shop", "+49 30 1234567")
    assert key == cache_key("shop", "+49 30 1234567")
    assert key != cache_key("shop", "+49 30 7654321") != cache_key("other", "+49 30 1234567")
    assert key.startswith("keel-") and "1234567" not in key
