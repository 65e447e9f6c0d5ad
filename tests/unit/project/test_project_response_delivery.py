"""Variant selection, placeholder filling and the merged response registry."""

from __future__ import annotations

from _project_helpers import codes, yaml_data

from keel.conditions import Reference, Unreadable, read_from_mapping
from keel.project.responses import (
    Response,
    fill_placeholders,
    merge_responses,
    parse_responses,
    select_variant,
)

TIERED = """\
responses:
  utter_status:
    - text: gold
      condition: session.project.tier == 'gold'
    - text: fallback
    - text: vip
      condition: session.project.vip
"""


def response(text: str, file: str = "responses.yml") -> Response:
    responses, _ = parse_responses(yaml_data(text), file)
    return responses[0]


def test_first_true_condition_in_yaml_order_wins() -> None:
    status = response(TIERED)
    chosen = select_variant(status, read_from_mapping({"project.tier": "gold", "project.vip": 1}))
    assert chosen is not None and chosen.text == "gold"
    chosen = select_variant(status, read_from_mapping({"project.vip": True}))
    assert chosen is not None and chosen.text == "vip"


def test_no_true_condition_gives_the_default_wherever_it_sits() -> None:
    chosen = select_variant(response(TIERED), read_from_mapping({}))
    assert chosen is not None and chosen.text == "fallback"


def test_closed_condition_is_skipped() -> None:
    def read(reference: Reference) -> object:
        if reference.entry == "tier":
            raise Unreadable(reference)
        return True

    chosen = select_variant(response(TIERED), read)
    assert chosen is not None and chosen.text == "vip"


def test_all_unconditioned_gives_the_first() -> None:
    chosen = select_variant(
        response("responses:\n  utter_x:\n    - one\n    - two\n"), read_from_mapping({})
    )
    assert chosen is not None and chosen.text == "one"


def test_no_match_and_no_default_fails_closed() -> None:
    only_conditioned = response(
        "responses:\n  utter_x:\n    - text: a\n      condition: session.project.vip\n"
    )
    assert select_variant(only_conditioned, read_from_mapping({})) is None
    chosen = select_variant(only_conditioned, read_from_mapping({"project.vip": True}))
    assert chosen is not None and chosen.text == "a"


def test_variant_with_invalid_condition_is_never_delivered() -> None:
    broken = response("responses:\n  utter_x:\n    - text: broken\n      condition: 'vip =='\n")
    assert select_variant(broken, read_from_mapping({})) is None


def test_fill_placeholders() -> None:
    values = {("project", "name"): "Ada", (None, "plan"): "Fibre 500"}

    def lookup(namespace: str | None, entry: str) -> str | None:
        return values.get((namespace, entry))

    text = "Hi {session.project.name}, plan {plan}; {missing} {session.x.y} {a.b} {not this} {}"
    assert fill_placeholders(text, lookup) == (
        "Hi Ada, plan Fibre 500; {missing} {session.x.y} {a.b} {not this} {}"
    )


def test_fill_placeholders_does_not_recurse_into_values() -> None:
    assert fill_placeholders("{a}", lambda ns, entry: "{b}") == "{b}"


def test_merge_project_files_into_one_registry() -> None:
    bundled = response("responses:\n  utter_greet:\n    - Hello.\n", "<bundled>")
    skipped = response("responses:\n  utter_set_memory_button_skipped:\n    - No.\n", "<bundled>")
    root = parse_responses(
        yaml_data("responses:\n  utter_greet:\n    - Welcome!\n  utter_bye:\n    - Bye\n"),
        "responses.yml",
    )[0]
    skill = parse_responses(
        yaml_data("responses:\n  utter_ask:\n    - Which?\n\n  utter_bye:\n    - Ciao\n"),
        "skills/a/responses.yml",
    )[0]
    registry, diagnostics = merge_responses([bundled, skipped], [root, skill])
    assert set(registry) == {
        "utter_greet",
        "utter_set_memory_button_skipped",
        "utter_bye",
        "utter_ask",
    }
    assert registry["utter_greet"].variants[0].text == "Welcome!"
    assert registry["utter_bye"].file == "responses.yml"
    assert codes(diagnostics) == [("response.duplicate_name", 5)]
    (duplicate,) = diagnostics
    assert duplicate.file == "skills/a/responses.yml" and duplicate.key == "utter_bye"
    assert duplicate.severity == "warning"
    assert "responses.yml:4" in duplicate.message
