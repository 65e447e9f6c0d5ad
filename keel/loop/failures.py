"""What operators see of a failed turn: one ERROR line in the server log (`keel.loop`).

Every line names the conversation and the turn, in the message and as the record's
`conversation_id` / `turn_id` attributes, with the cause as attributes too: `error_type`
and `error` always; a model failure adds `error_code` (`keel.model.unavailable`, ...),
`provider` and `http_status` (None when no HTTP answer came: a refused connection, a
timeout). A store error or a bug comes with its traceback; a model failure with the
provider's own error (the SDK's chained exception, which may describe the request, is
left out). A configured API key the provider echoed is scrubbed from the error first
(`keel.llm.errors.without_secret`), so neither this line nor the `turn_ended` detail
shows it.
"""

from __future__ import annotations

import logging

from keel.errors import RunError, StoreError
from keel.llm.errors import ModelError, ProviderError, without_secret
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
        cause = _cause(exc)
        provider = getattr(exc, "provider", "") or None
        status = exc.status if isinstance(exc, ProviderError) else None
        cause |= {"error_code": exc.code, "provider": provider, "http_status": status}
        said = ", ".join(
            part
            for part in (
                f"provider {provider}" if provider else "",
                f"HTTP {status}" if status is not None else "",
            )
            if part
        )
        _log.error(
            "model call failed %s: %s%s: %s",
            where,
            type(exc).__name__,
            f" ({said})" if said else "",
            exc,
            extra=ids | cause,
        )
    elif isinstance(exc, StoreError):
        _log.error("event store failed %s", where, exc_info=exc, extra=ids | _cause(exc))
    else:
        _log.error("turn failed %s", where, exc_info=exc, extra=ids | _cause(exc))


class logged_start:
    """Log a failure while turn `t` is being started (its `turn_started` append), then
    let it propagate: nothing of the turn may be stored, so this line is the only place
    its id is seen (the server logs the failed request too, without the turn). A
    `RunError` is the request's own conflict (the server answers 409), not logged here.
    (A class, not a generator: every request enters one.)"""

    __slots__ = ("t",)

    def __init__(self, t: TurnContext) -> None:
        self.t = t

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, _tb: object
    ) -> None:
        if isinstance(exc, Exception) and not isinstance(exc, RunError):
            log_turn_failure(self.t, exc)


def _cause(exc: Exception) -> dict[str, object]:
    return {"error_type": type(exc).__name__, "error": str(exc)}
