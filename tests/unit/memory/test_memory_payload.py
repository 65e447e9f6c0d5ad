"""The `set:` payload grammar (spec §3.5)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keel.memory.payload import MalformedPayload, SetPayload, format_set_payload, parse_set_payload


@pytest.mark.parametrize(
    ("text", "namespace", "entry", "value"),
    [
        ("set:session.weather.city=Oslo", "weather", "city", "Oslo"),
        ("set:session.project.plan=pro", "project", "plan", "pro"),
        ("set:session.weather.city=", "weather", "city", ""),
        ("set:session.weather.query=a=b==c", "weather", "query", "a=b==c"),
        ("set:session.weather.city= spaced out ", "weather", "city", " spaced out "),
        ('set:session.weather.tags=["a", "b"]', "weather", "tags", '["a", "b"]'),
        ("set:session.file-claim.amount=12.5", "file-claim", "amount", "12.5"),
        ("set:session.skill_2._private=x", "skill_2", "_private", "x"),
        ("set:session.w.c=line\nbreak", "w", "c", "line\nbreak"),
    ],
)
def test_well_formed(text: str, namespace: str, entry: str, value: str) -> None:
    payload = parse_set_payload(text)
    assert payload == SetPayload(namespace=namespace, entry=entry, value=value)
    assert payload.key == f"{namespace}.{entry}"
    assert payload.render() == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "Set:session.weather.city=Oslo",
        " set:session.weather.city=Oslo",
        "/session_start",
        "set",
        "session.weather.city=Oslo",
    ],
)
def test_not_a_payload(text: str) -> None:
    assert parse_set_payload(text) is None


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        ("set:", "missing"),
        ("set:session.weather.city", "missing"),
        ("set:=x", "not session."),
        ("set:weather.city=x", "not session."),
        ("set:session.city=x", "not session."),
        ("set:session.a.b.c=x", "not session."),
        ("set:memory.weather.city=x", "not session."),
        ("set: session.weather.city=x", "not session."),
        ("set:session.weather.city =x", "identifier"),
        ("set:session..city=x", "namespace"),
        ("set:session.wea ther.city=x", "namespace"),
        ("set:session.weather.=x", "identifier"),
        ("set:session.weather.1city=x", "identifier"),
        ("set:session.weather.ci-ty=x", "identifier"),
        ("set:session.system.pending_tool_confirmation=x", "system"),
    ],
)
def test_malformed(text: str, reason_part: str) -> None:
    result = parse_set_payload(text)
    assert isinstance(result, MalformedPayload)
    assert result.text == text
    assert reason_part in result.reason


def test_format_round_trips() -> None:
    text = format_set_payload("project", "plan", "a=b")
    assert text == "set:session.project.plan=a=b"
    assert parse_set_payload(text) == SetPayload(namespace="project", entry="plan", value="a=b")


@settings(derandomize=True)
@given(
    namespace=st.sampled_from(["project", "weather", "file-claim"]),
    entry=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    value=st.text(),
)
def test_any_value_round_trips(namespace: str, entry: str, value: str) -> None:
    text = format_set_payload(namespace, entry, value)
    assert parse_set_payload(text) == SetPayload(namespace=namespace, entry=entry, value=value)
