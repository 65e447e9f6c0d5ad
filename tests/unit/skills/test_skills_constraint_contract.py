"""Plan-contract keys under `tool_constraints.<tool>`: kept when valid, an error each when not."""

from __future__ import annotations

import pytest
from skilltext import codes, marked, parse

from keel.tools.contract import contract_problems


def test_contract_keys_are_kept_beside_the_other_constraints() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        tool_constraints:
          - cancel_order:
              requires: "session.project.customer_verified"
              effect: write
              bindings: {order_id: request, reason: structural}
              idempotency_key: [order_id]
              runtime_resolved: [user_id]
              outbound_args: [reason]
              verbs: [call off]
              output_schema:
                type: object
                properties: {status: {type: string}}
          - list_orders:
              effect: read_only
          - greet: {}
        ---
        Prose.
        """
    )
    assert diagnostics == []
    assert document is not None
    cancel, listing, greet = document.tool_constraints
    assert cancel.requires is not None
    assert cancel.contract is not None
    assert dict(cancel.contract["bindings"]) == {  # type: ignore[call-overload]
        "order_id": "request",
        "reason": "structural",
    }
    assert cancel.contract["effect"] == "write"
    assert cancel.contract["verbs"] == ("call off",)
    assert contract_problems(cancel.contract) == []
    assert listing.contract == {"effect": "read_only"}
    assert greet.contract is None


def test_idempotency_key_none_says_there_is_no_key() -> None:
    document, diagnostics = parse(
        """
        ---
        name: N
        description: D
        tool_constraints:
          - send_email:
              idempotency_key: none
        ---
        Prose.
        """
    )
    assert diagnostics == [] and document is not None
    assert document.tool_constraints[0].contract == {"idempotency_key": ()}


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("effect: explode «", "effect 'explode'"),
        ("bindings: {to: somewhere} «", "binding 'somewhere' of 'to'"),
        ("bindings: [to] «", "bindings must map"),
        ("idempotency_key: order_id «", "idempotency_key must be a list"),
        ("verbs: cancel «", "verbs must be a list"),
        ("runtime_resolved: [1, 2] «", "runtime_resolved must be a list"),
        ("output_schema: object «", "output_schema must be"),
        ("effect: «", "effect needs a value"),
    ],
)
def test_a_bad_contract_key_is_an_error_on_its_line(body: str, fragment: str) -> None:
    text, line = marked(
        f"""
        ---
        name: N
        description: D
        tool_constraints:
          - send_email:
              requires: "session.project.customer_verified"
              {body}
              outbound_args: [to]
        ---
        Prose.
        """
    )
    document, diagnostics = parse(text)
    assert codes(diagnostics) == [("skill.tool_constraints.contract_invalid", line)]
    assert fragment in diagnostics[0].message
    assert "tool_constraints.send_email." in diagnostics[0].message
    assert diagnostics[0].severity == "error"
    assert document is not None
    # the good keys are kept
    assert document.tool_constraints[0].contract == {"outbound_args": ("to",)}


def test_unknown_keys_are_still_unknown() -> None:
    text, line = marked(
        """
        ---
        name: N
        description: D
        tool_constraints:
          - send_email:
              effects: write «
        ---
        Prose.
        """
    )
    _document, diagnostics = parse(text)
    assert codes(diagnostics) == [("skill.tool_constraints.unknown_key", line)]
