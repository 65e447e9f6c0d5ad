"""The turn loop: a deterministic pass first, the model only for judgement.

`Engine.handle(conversation_id, text)` runs one request; see `keel.loop.driver` for the
order of a turn and `keel.loop.turn` for what a turn is.
"""

from keel.loop.engine import Engine
from keel.loop.result import TurnResult

__all__ = ["Engine", "TurnResult"]
