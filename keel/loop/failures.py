"""What operators see of a failed turn: one ERROR line in the server log (`keel.loop`).

Every line names the conversation and the turn, in the message and as the record's
`conversation_id` / `turn_id` attributes. A store error or a bug comes with its traceback;
a model failure with the provider's own error (the SDK's chained exception, which may
describe the request, is left out), and any configured API key in it is blanked, here and
in the `turn_ended` detail.
"""

from __future__ import annotations

import logging

from keel.errors import StoreError
from keel.llm.errors import ModelError
from keel.loop.turn import TurnContext
from keel.project.definition import AgentDefinition

_log = logging.getLogger("keel.loop")

REDACTED = "[redacted]"


def failure_detail(t: TurnContext, exc: Exception) -> str:
    """`<ExceptionType>: <message>` for `turn_ended.metadata.detail`, keys blanked."""
    return redact(f"{type(exc).__name__}: {exc}", t.definition)


def log_turn_failure(t: TurnContext, exc: Exception) -> None:
    """Log the failure that ended turn `t` at ERROR."""
    ids = {"conversation_id": t.recorder.conversation_id, "turn_id": t.turn_id}
    where = f"(conversation {ids['conversation_id']}, turn {ids['turn_id']})"
    if isinstance(exc, ModelError):
        _log.error("model call failed %s: %s", where, failure_detail(t, exc), extra=ids)
    elif isinstance(exc, StoreError):
        _log.error("event store failed %s", where, exc_info=exc, extra=ids)
    else:
        _log.error("turn failed %s", where, exc_info=exc, extra=ids)


def redact(text: str, definition: AgentDefinition) -> str:
    """`text` with every configured model API key replaced by `[redacted]`."""
    for group in definition.integrations.model_groups:
        for spec in group.models:
            key = spec.api_key.reveal() if spec.api_key is not None else ""
            if key:
                text = text.replace(key, REDACTED)
    return text
