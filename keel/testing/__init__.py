"""Shipped fakes for testing agents and Keel itself.

`ScriptedModel` (a queue of model replies), `ConversationHarness` (drive an agent in
process), `FakeClock` and `SequentialIds` (deterministic time and ids).
"""

from keel.ids import FakeClock, SequentialIds
from keel.testing.harness import ConversationHarness, load_definition, make_harness
from keel.testing.scripted import ScriptedModel

__all__ = [
    "ConversationHarness",
    "FakeClock",
    "ScriptedModel",
    "SequentialIds",
    "load_definition",
    "make_harness",
]
