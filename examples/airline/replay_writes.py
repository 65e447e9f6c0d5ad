"""What became of each write the recorded model asked for, in a replay through the policy.

The airline agent holds every write until the customer answers a confirmation question
(`requires_confirmation` on the six write tools), and its tools refuse what the policy
does not allow (`Error: policy.<rule>: ...`). A recording has no answer to Keel's question:
the recorded model asked the customer itself, and the customer answered in words before
the model made the call. So the replay answers Keel's question for the customer from
that recorded message (`approves`): yes when it agrees ("yes", "proceed", "go ahead",
"confirm", "ok", "sure") or asks for the action in so many words ("please downgrade all
of them", "please make that change"), no otherwise ("I'll go with the first option", a
payment choice with no yes). That is a stand-in for an answer the customer never gave:
the numbers are reported both with it and with every question answered yes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from keel.events.model import (
    Event,
    PausePointCreated,
    PausePointResolved,
    ToolCallRefused,
    ToolExecuted,
)

WRITE_TOOLS = frozenset(
    {
        "book_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "cancel_reservation",
        "send_certificate",
    }
)
"""The tools that change the database."""

POLICY_PREFIX = "Error: policy."
"""How a tool's policy refusal reads to the model."""

GATE_CODES = frozenset({"tool.requires_closed", "tool.not_offered"})
"""Refusals of a call whose `requires` gate is closed (nobody signed in)."""

_ASSENT = re.compile(
    r"\b(yes|yeah|yep|sure|ok|okay|confirm|confirmed|proceed|go ahead)\b", re.IGNORECASE
)
_REQUEST = re.compile(
    r"\bplease\s+(book|cancel|change|make|update|downgrade|upgrade|use|add|modify)\b",
    re.IGNORECASE,
)

Outcome = Literal["ran", "failed", "refused", "declined", "gated"]
"""`ran`: it changed the database; `failed`: the tool's own (reference) error; `refused`:
a `policy.*` error; `declined`: the confirmation was answered no; `gated`: the call was
refused before it was held (its `requires` gate was closed)."""


def approves(user_text: str) -> bool:
    """Whether the recorded customer message agrees to, or asks for, the action."""
    return bool(_ASSENT.search(user_text) or _REQUEST.search(user_text))


@dataclass(frozen=True, kw_only=True, slots=True)
class WriteAttempt:
    """One write call the recorded model made, and what the agent did with it."""

    tool: str
    arguments: Mapping[str, Any]
    outcome: Outcome
    code: str | None
    """`policy.<rule>`, `confirmation.declined` or the gate's refusal code."""
    user_text: str
    """The recorded customer message the call followed."""

    @property
    def stopped(self) -> bool:
        """The policy stopped it: refused, declined or gated."""
        return self.outcome in ("refused", "declined", "gated")

    def describe(self) -> str:
        """One line for people."""
        code = f" ({self.code})" if self.code else ""
        return f"{self.tool} {self.outcome}{code} after {self.user_text[:70]!r}"


def write_attempts(events: Iterable[Event], user_text: str) -> list[WriteAttempt]:
    """The write calls of one recorded user turn (its events, confirmations included)."""
    attempts: list[WriteAttempt] = []
    held: PausePointCreated | None = None
    for event in events:
        if isinstance(event, PausePointCreated) and event.tool_name in WRITE_TOOLS:
            held = event
        elif isinstance(event, PausePointResolved) and held is not None and not event.approved:
            attempts.append(_attempt(held.tool_name, held.tool_args, "declined", user_text))
            held = None
        elif isinstance(event, ToolExecuted) and event.tool_name in WRITE_TOOLS:
            held = None
            attempts.append(_ran(event, user_text))
        elif isinstance(event, ToolCallRefused) and event.tool_name in WRITE_TOOLS:
            arguments = _json_object(event.arguments)
            outcome: Outcome = "gated" if event.code in GATE_CODES else "failed"
            attempts.append(
                WriteAttempt(
                    tool=event.tool_name,
                    arguments=arguments,
                    outcome=outcome,
                    code=event.code,
                    user_text=user_text,
                )
            )
    return attempts


def _attempt(
    tool: str, arguments: Mapping[str, Any], outcome: Outcome, user_text: str
) -> WriteAttempt:
    code = "confirmation.declined" if outcome == "declined" else None
    return WriteAttempt(
        tool=tool, arguments=dict(arguments), outcome=outcome, code=code, user_text=user_text
    )


def _ran(event: ToolExecuted, user_text: str) -> WriteAttempt:
    if not event.is_error:
        outcome: Outcome = "ran"
        code = None
    elif event.result.startswith(POLICY_PREFIX):
        outcome = "refused"
        code = event.result.removeprefix("Error: ").split(":", 1)[0]
    else:
        outcome, code = "failed", None
    return WriteAttempt(
        tool=event.tool_name,
        arguments=dict(event.arguments),
        outcome=outcome,
        code=code,
        user_text=user_text,
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _normal(value: Any) -> Any:
    """Arguments compared with the gold ones: numbers as floats, and flight legs by flight
    number and date only (one recorded call adds the legs' origin and destination)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, Mapping):
        if "flight_number" in value and "date" in value:
            return {"flight_number": value["flight_number"], "date": value["date"]}
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_normal(item) for item in value]
    return value


def in_gold(attempt: WriteAttempt, gold_actions: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the task's gold actions hold this very call (same tool, same arguments)."""
    mine = _normal(attempt.arguments)
    return any(
        action.get("name") == attempt.tool and _normal(action.get("arguments") or {}) == mine
        for action in gold_actions
    )
