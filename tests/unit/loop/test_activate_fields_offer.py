"""The `activate` tool offers `fields` for the collect entries of the skills it may start
(`keel.loop.offer`): each target that collects entries is listed with them, in step order;
with no such target the tool takes only `target_id`, as before."""

from __future__ import annotations

from pathlib import Path

from keel.events.fold import ConversationState
from keel.loop.offer import CallMode, offered_tools
from keel.testing import load_definition

AGENTS = Path(__file__).resolve().parents[2] / "conversations" / "agents"


def _activate(agent: str) -> tuple[str, dict[str, object]]:
    definition = load_definition(AGENTS / agent)
    offers = offered_tools(definition, ConversationState(), CallMode())
    offer = next(o for o in offers if o.name == "activate")
    return offer.description, dict(offer.parameters)


def test_collect_entries_of_the_targets_are_offered() -> None:
    description, parameters = _activate("library")
    properties = parameters["properties"]
    assert isinstance(properties, dict)
    assert set(properties) == {"target_id", "fields"}
    assert parameters["required"] == ["target_id"]
    fields = properties["fields"]
    assert list(fields["properties"]) == ["book_id", "weeks"]
    # Untyped in the schema: a wrong value is refused when written, not the activation.
    assert all("type" not in p for p in fields["properties"].values())
    assert fields["properties"]["weeks"]["description"] == (
        "renew_loan (int): How many more weeks the loan should run."
    )
    assert description.endswith("entries: renew_loan: book_id, weeks")


def test_no_fields_when_no_target_collects() -> None:
    description, parameters = _activate("knowledge")
    properties = parameters["properties"]
    assert isinstance(properties, dict)
    assert set(properties) == {"target_id"}
    assert "fields" not in description
