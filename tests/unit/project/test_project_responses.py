"""responses.yml parsing: variants, buttons, placeholders and every diagnostic with its line."""

from __future__ import annotations

import pytest
from _project_helpers import codes, only, yaml_data

from keel.project.responses import (
    Button,
    ButtonSource,
    Placeholder,
    Response,
    SetPayload,
    parse_responses,
)
from keel.source.diagnostics import Diagnostic

FILE = "skills/billing/responses.yml"


def parse(text: str) -> tuple[tuple[Response, ...], list[Diagnostic]]:
    responses, diagnostics = parse_responses(yaml_data(text), FILE)
    assert all(d.file == FILE for d in diagnostics)
    return responses, diagnostics


def test_plain_and_mapping_variants() -> None:
    responses, diagnostics = parse(
        """\
        responses:
          utter_hello:
            - Hello there!
          utter_plan:
            - text: You are on the {session.project.plan} plan.
              condition: session.project.plan != None
              metadata: {rephrase: true, tone: warm}
            - text: I could not find your plan.
        """
    )
    assert diagnostics == []
    hello, plan = responses
    assert (hello.name, hello.file, hello.line) == ("utter_hello", FILE, 2)
    assert hello.variants[0].text == "Hello there!" and hello.variants[0].line == 3
    assert hello.variants[0].is_default and hello.variants[0].buttons == ()
    first, second = plan.variants
    assert first.condition is not None
    assert first.condition_source == "session.project.plan != None"
    assert not first.is_default and first.rephrase and first.metadata["tone"] == "warm"
    assert first.line == 5
    assert second.is_default and not second.rephrase
    assert plan.placeholders == (
        Placeholder(namespace="project", entry="plan", raw="{session.project.plan}", line=5),
    )


def test_static_buttons_payload_defaults_to_title_and_set_payloads() -> None:
    responses, diagnostics = parse(
        """\
        responses:
          utter_ask_topic:
            - text: What is it about?
              buttons:
                - title: Billing
                - title: "Internet is down"
                  payload: "set:session.billing.topic=outage"
                - title: "Pay {amount}"
                  payload: "set:session.project.pay_now=True"
        """
    )
    assert diagnostics == []
    (response,) = responses
    buttons = response.variants[0].buttons
    assert isinstance(buttons, tuple)
    assert buttons[0] == Button(title="Billing", payload="Billing", line=5)
    assert buttons[1].set_payload == SetPayload(
        namespace="billing", entry="topic", value="outage", line=6
    )
    assert buttons[1].set_payload.key == "billing.topic"
    assert [p.key for p in response.set_payloads] == ["billing.topic", "project.pay_now"]
    assert response.placeholders == (
        Placeholder(namespace=None, entry="amount", raw="{amount}", line=8),
    )


def test_dynamic_buttons() -> None:
    responses, diagnostics = parse(
        "responses:\n  utter_pick:\n    - text: Pick one\n      buttons: {source: list_plans}\n"
    )
    assert diagnostics == []
    (response,) = responses
    assert response.variants[0].buttons == ButtonSource(tool="list_plans", line=4)
    assert response.button_sources == (ButtonSource(tool="list_plans", line=4),)


@pytest.mark.parametrize(
    ("buttons", "line"),
    [
        ("      buttons: {source: x, extra: 1}\n", 4),
        ("      buttons: {tool: x}\n", 4),
        ("      buttons: yes\n", 4),
        ("      buttons:\n        - just text\n", 5),
        ("      buttons:\n        - {title: a, payload: b, color: red}\n", 5),
        ("      buttons:\n        - {payload: b}\n", 5),
        ("      buttons:\n        - {title: Yes}\n", 5),
        ("      buttons:\n        - {title: a, payload: [1]}\n", 5),
    ],
)
def test_malformed_buttons(buttons: str, line: int) -> None:
    _, diagnostics = parse("responses:\n  utter_x:\n    - text: hi\n" + buttons)
    assert codes(diagnostics) == [("response.buttons.malformed", line)]


def test_boolean_button_title_hint() -> None:
    _, diagnostics = parse("responses:\n  utter_x:\n    - text: hi\n      buttons: [{title: No}]\n")
    assert "quote it" in only(diagnostics, "response.buttons.malformed").message


def test_numeric_payload_becomes_text() -> None:
    responses, _ = parse(
        "responses:\n  utter_x:\n    - text: hi\n      buttons: [{title: a, payload: 2}]\n"
    )
    buttons = responses[0].variants[0].buttons
    assert isinstance(buttons, tuple) and buttons[0].payload == "2"


@pytest.mark.parametrize(
    "payload",
    [
        "set:project.plan=basic",
        "set:session.plan=basic",
        "set:session.project.plan",
        "set:session.project.plan=",
        "set:session.pro-ject.plan=1",
        "set: session.project.plan=1",
    ],
)
def test_bad_set_payloads(payload: str) -> None:
    responses, diagnostics = parse(
        f"responses:\n  utter_x:\n    - text: hi\n      buttons:\n        - title: a\n"
        f"          payload: '{payload}'\n"
    )
    assert codes(diagnostics) == [("response.buttons.bad_set_payload", 5)]
    assert responses[0].set_payloads == ()


def test_unknown_variant_key_channel() -> None:
    responses, diagnostics = parse("responses:\n  utter_x:\n    - text: hi\n      channel: voice\n")
    found = only(diagnostics, "response.variant.unknown_key")
    assert (found.line, found.key) == (4, "channel")
    assert len(responses) == 1


@pytest.mark.parametrize(
    ("variant", "line"),
    [
        ("    - ''\n", 3),
        ("    - '   '\n", 3),
        ("    - text: ''\n", 3),
        ("    - condition: session.a.b\n", 3),
        ("    - text: [a]\n", 3),
    ],
)
def test_empty_text(variant: str, line: int) -> None:
    _, diagnostics = parse("responses:\n  utter_x:\n" + variant + "    - fine\n")
    assert codes(diagnostics) == [("response.variant.empty_text", line)]


@pytest.mark.parametrize(
    "condition",
    ["session.project", "plan == 'x'", "session.a.b ==", "''", "true", "session.a.b in [1]"],
)
def test_bad_condition(condition: str) -> None:
    responses, diagnostics = parse(
        f"responses:\n  utter_x:\n    - text: a\n      condition: {condition}\n    - b\n"
    )
    assert codes(diagnostics) == [("response.variant.bad_condition", 4)]
    variant = responses[0].variants[0]
    assert variant.condition is None and variant.condition_source is not None
    assert not variant.is_default


def test_bad_condition_message_carries_condition_code() -> None:
    _, diagnostics = parse(
        "responses:\n  utter_x:\n    - text: a\n      condition: plan == 1\n    - b\n"
    )
    assert "condition.unknown_name" in only(diagnostics, "response.variant.bad_condition").message


def test_multiple_defaults_points_at_second_default() -> None:
    _, diagnostics = parse(
        """\
        responses:
          utter_x:
            - one
            - text: two
              condition: session.project.vip
            - three
            - four
        """
    )
    assert codes(diagnostics) == [
        ("response.variant.multiple_defaults", 6),
        ("response.variant.multiple_defaults", 7),
    ]


def test_conditioned_variants_without_default() -> None:
    _, diagnostics = parse(
        "responses:\n  utter_x:\n    - text: a\n      condition: session.project.vip\n"
    )
    found = only(diagnostics, "response.variant.no_default")
    assert (found.line, found.key) == (2, "utter_x")


def test_metadata_must_be_a_mapping() -> None:
    _, diagnostics = parse("responses:\n  utter_x:\n    - text: a\n      metadata: rephrase\n")
    assert codes(diagnostics) == [("response.variant.bad_metadata", 4)]


def test_variant_of_wrong_shape() -> None:
    _, diagnostics = parse("responses:\n  utter_x:\n    - 42\n    - ok\n")
    assert codes(diagnostics) == [("response.variant.malformed", 3)]


@pytest.mark.parametrize("value", ["hello", "[]", "{text: a}", "null"])
def test_response_value_must_be_a_non_empty_list(value: str) -> None:
    responses, diagnostics = parse(f"responses:\n  utter_x: {value}\n")
    assert responses == ()
    assert codes(diagnostics) == [("response.malformed", 2)]


def test_response_name_must_be_text() -> None:
    _, diagnostics = parse("responses:\n  12: [a]\n")
    assert codes(diagnostics) == [("response.malformed", 2)]


def test_name_without_utter_prefix_warns() -> None:
    responses, diagnostics = parse("responses:\n  greet:\n    - hi\n")
    found = only(diagnostics, "response.name.bad_prefix")
    assert (found.line, found.severity) == (2, "warning")
    assert responses[0].name == "greet"


def test_malformed_placeholder_warns_and_valid_ones_are_recorded() -> None:
    responses, diagnostics = parse(
        "responses:\n  utter_x:\n    - text: 'Hi {name}, {session.project} {a.b} {not one} {}'\n"
    )
    assert codes(diagnostics) == [
        ("response.placeholder.malformed", 3),
        ("response.placeholder.malformed", 3),
    ]
    assert all(d.severity == "warning" for d in diagnostics)
    assert [p.raw for p in responses[0].placeholders] == ["{name}"]


def test_file_shape() -> None:
    assert parse_responses(None, FILE) == ((), [])
    _, diagnostics = parse("utter_x: [a]\n")
    assert codes(diagnostics) == [("response.file.malformed", 1)]
    _, diagnostics = parse("responses: [a]\n")
    assert codes(diagnostics) == [("response.file.malformed", 1)]
    responses, diagnostics = parse("responses:\n")
    assert (responses, diagnostics) == ((), [])
    _, diagnostics = parse("responses: {}\nschema: {}\n")
    assert codes(diagnostics) == [("response.file.unknown_key", 2)]
    assert diagnostics[0].severity == "warning"


def test_block_scalar_texts_lose_the_trailing_newline_yaml_adds() -> None:
    responses, diagnostics = parse(
        """\
        responses:
          utter_filed:
            - text: |
                Your claim is filed.
                We will call you back.
            - text: >
                Folded text.
              condition: session.project.x
          utter_plain:
            - |
              Plain block.
        """
    )
    assert diagnostics == []
    texts = [v.text for r in responses for v in r.variants]
    assert texts == ["Your claim is filed.\nWe will call you back.", "Folded text.", "Plain block."]
