"""Events recording how the engine prepared model work: routing and history compression.

Both were added in schema version 3. They record decisions, not changes: the engine writes
the stack and memory changes a decision implies as their own events, so the fold ignores
them. They are in the log so a conversation can be explained (why this skill, why the
model saw less history than was said) and so replays can check the same decisions are made.
"""

from dataclasses import dataclass

from keel.events.base import EventBase, RoutingSource


@dataclass(frozen=True, kw_only=True, slots=True)
class RoutingDecided(EventBase):
    """The router's decision for a user message: which skill handles it, and who decided.

    Added in schema version 3.
    """

    kind = "routing_decided"

    source: RoutingSource
    """Who decided: `slash` (a slash command), `sticky` (the active skill was kept),
    `router` (a router-tier classification), `model` (the main model's `activate` call)
    or `none` (no decision: no skill was chosen for the message)."""

    skill_id: str | None
    """The skill chosen, or None when no skill was chosen."""

    tier: str | None
    """The model tier the decision was made with, when a model made it (`router`,
    `default`, ...); None for `slash`, `sticky` and `none`."""

    confidence: float | None = None
    """The classifier's confidence, when the router reports one."""

    candidates: tuple[str, ...] = ()
    """The ids of the eligible skills that were considered, in the order offered."""

    reason: str = ""
    """A short human-readable explanation (the router's rationale, the slash command...)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class HistoryCompressed(EventBase):
    """The history policy dropped or summarised messages before a model call.

    Written before the `model_called` of the call it shaped. Added in schema version 3.
    """

    kind = "history_compressed"

    budget_tokens: int
    """The token budget the history had to fit."""

    tokens_before: int
    """Estimated tokens of the history before compression."""

    tokens_after: int
    """Estimated tokens of the history the model was sent."""

    dropped_messages: int
    """How many messages were left out entirely."""

    summarized_messages: int = 0
    """How many messages were replaced by a summary."""

    kept: tuple[str, ...] = ()
    """Labels of what the policy protected from compression, e.g. `pending_confirmation`,
    `collected_values`, `current_turn_tool_results`."""

    model: str = ""
    """The concrete model id whose context the history was fitted to, when known."""
