"""What operators see of a failed turn: one ERROR line in the server log (`keel.loop`).

Every line names the conversation and the turn, in the message and as the record's
`conversation_id` / `turn_id` attributes. A store error or a bug comes with its traceback;
a model failure with the provider's own error (the SDK's chained exception, which may
describe the request, is left out). A configured API key the provider echoed is scrubbed
from the error first (`keel.llm.errors.without_secret`), so neither this line nor the
`turn_ended` detail shows it.
"""

from __future__ import annotations

import logging

from keel.errors import StoreError
from keel.llm.errors import ModelError, without_secret
from keel.loop.turn import TurnContext

_log = logging.getLogger("keel.loop")


def log_turn_failure(t: TurnContext, exc: Exception) -> None:
    """Log the failure that ends turn `t` at ERROR (a model error is scrubbed in place)."""
    ids = {"conversation_id": t.recorder.conversation_id, "turn_id": t.turn_id}
    where = f"(conversation {ids['conversation_id']}, turn {ids['turn_id']})"
    if isinstance(exc, ModelError):
        for group in t.definition.integrations.model_groups:
            for spec in group.models:
                without_secret(exc, spec.api_key.reveal() if spec.api_key else None)
        _log.error("model call failed %s: %s: %s", where, type(exc).__name__, exc, extra=ids)
    elif isinstance(exc, StoreError):
        _log.error("event store failed %s", where, exc_info=exc, extra=ids)
    else:
        _log.error("turn failed %s", where, exc_info=exc, extra=ids)
