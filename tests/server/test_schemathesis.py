"""Schemathesis against the OpenAPI schema served by `keel run`: no generated request gets a 5xx.

The server is a real uvicorn process (`keel run examples/support --model scripted:FILE`,
started like live_server.py does) and the schema is the one it serves at `/openapi.json`,
so the run sees what a client sees. Every request carries one API key with both scopes
(`chat,admin`), so every operation is reached past authentication (the rate limit is off,
so no answer is a 429 for being the hundred-and-twenty-first). The script has only a few
replies: once they are used up, turns fail inside the engine (stop reason `error`), which
the server must still answer without a 5xx.

Every operation runs Schemathesis's examples, coverage and fuzzing phases, positive and
negative inputs. The run is bounded and repeatable: a fixed seed, deterministic generation
(Hypothesis `derandomize`), no example database, and at most MAX_EXAMPLES fuzzed cases per
operation (the coverage phase adds its own schema-derived cases; about 440 requests in all).

Checks: `not_a_server_error` on every answer; the answer's content type, headers and body
conform to the schema, except the body of a `text/event-stream` answer (see SSE below).
`status_code_conformance` is not used: the schema does not list some statuses the server
answers on purpose (400 `request.rejected` for a body that is not JSON text, 400
`conversation.id_required` on /v1/chat/completions, 409 `conversation.not_running` on
cancel). A 5xx from the server is a finding: mark the test xfail(strict=True) with the
request and the server function, do not loosen the check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import schemathesis
from live_server import live_server
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
)
from server_kit import EXAMPLE

KEY = "fuzz-secret"
AUTH = {"Authorization": f"Bearer {KEY}"}
SCRIPT = """\
- tool_calls: [{name: activate, arguments: {target_id: report_outage}}]
- tool_calls: [{name: set_fields, arguments: {fields: {postcode: LN4 7QP}}}]
- Thanks, is there anything else?
"""

OPERATIONS = 26
"""Every operation of docs/api.md (test_openapi.py checks the schema lists exactly those)."""

MAX_EXAMPLES = 12
CONFIG = {
    "seed": 20260501,
    "request-timeout": 20,
    "generation": {
        "max-examples": MAX_EXAMPLES,
        "deterministic": True,
        "database": "none",
        # AUTH goes on every request; generated security headers would only make 401s.
        "with-security-parameters": False,
    },
}

CHECKS = [not_a_server_error, content_type_conformance, response_headers_conformance]
# SSE: the schema gives a `text/event-stream` answer the schema `{"type": "string"}` (the
# whole stream), while Schemathesis 4 validates each parsed event against it, so every
# event "violates" it. Such answers skip only the body check; JSON answers get it.
JSON_CHECKS = [*CHECKS, response_schema_conformance]

Tally = Counter[str]
TURN_ERRORS = "turns ended with stop reason 'error'"


@pytest.fixture(scope="module")
def tally() -> Tally:
    """Requests sent, by operation label, and turns that ended in an error."""
    return Counter()


@pytest.fixture(scope="module")
def served_schema(
    tmp_path_factory: pytest.TempPathFactory, tally: Tally
) -> Iterator[schemathesis.BaseSchema]:
    """The schema served by a running `keel run`; afterwards, what the run must have covered."""
    root = tmp_path_factory.mktemp("schemathesis")
    script = root / "script.yml"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {
        "KEEL_API_KEYS": f"fuzz:chat,admin:{KEY}",
        "KEEL_DATABASE_URL": f"sqlite:///{root / 'fuzz.db'}",
        "KEEL_RATE_LIMIT": "off",
    }
    args = [str(EXAMPLE), "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=root) as base:
        config = SchemathesisConfig.from_dict(CONFIG)
        yield schemathesis.openapi.from_url(f"{base}/openapi.json", config=config)
    operations = {label for label in tally if label != TURN_ERRORS}
    assert len(operations) == OPERATIONS, sorted(operations)
    # The script ran out: those turns were answered (200, stop reason `error`), not 5xx.
    assert tally[TURN_ERRORS] > 0, dict(tally)


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    # Schemathesis 4.32.5's `from_fixture` reads `request.node._nodeid`, which pytest 9 no
    # longer has; it only uses it to name the operations in reports.
    request.node._nodeid = request.node.nodeid


schema = schemathesis.pytest.from_fixture("served_schema")


@schema.parametrize()
def test_no_generated_request_gets_a_server_error(case: schemathesis.Case, tally: Tally) -> None:
    response = case.call(headers=AUTH)
    tally[case.operation.label] += 1
    is_sse = any(
        v.startswith("text/event-stream") for v in response.headers.get("content-type", [])
    )
    case.validate_response(response, checks=CHECKS if is_sse else JSON_CHECKS, headers=AUTH)
    if not is_sse and response.status_code == 200 and _stop_reason(response) == "error":
        tally[TURN_ERRORS] += 1


def _stop_reason(response: schemathesis.Response) -> object:
    if not any("json" in v for v in response.headers.get("content-type", [])):
        return None  # /metrics answers Prometheus text
    body = response.json()
    return body.get("stop_reason") if isinstance(body, dict) else None
