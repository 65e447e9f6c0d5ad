"""`stamped`: an event moved to a timestamp is the event `dataclasses.replace` would build."""

import dataclasses

import pytest
from event_strategies import events_of
from hypothesis import given

from keel.events.base import stamped
from keel.events.model import Event, MemorySet


@given(events_of())
def test_every_kind_stamped_equals_the_replaced_event(event: Event) -> None:
    copy = stamped(event, 1795942800.25)
    assert copy == dataclasses.replace(event, timestamp=1795942800.25)
    assert type(copy) is type(event)
    assert copy.timestamp == 1795942800.25


def test_the_original_is_left_as_it_was() -> None:
    event = MemorySet(key="project.plan", value={"tier": ["gold"]}, metadata={"by": "engine"})
    copy = stamped(event, 5.0)
    assert event.timestamp == 0.0
    assert copy.timestamp == 5.0
    assert copy.value == {"tier": ("gold",)}
    assert copy.metadata == {"by": "engine"}
    assert copy is not event


def test_the_copy_is_a_frozen_value_like_any_event() -> None:
    copy = stamped(MemorySet(key="project.plan", value="gold"), 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.timestamp = 3.0  # type: ignore[misc]
    assert copy == MemorySet(key="project.plan", value="gold", timestamp=2.0)
