"""Traces and metrics of real turns (docs/observability.md).

Spans are exported over OTLP/HTTP (protobuf) to a real receiver on a loopback port, which
decodes them with opentelemetry-proto's classes; the tests check the span tree of turns the
app served over HTTP. `/metrics` is scraped over HTTP and read with prometheus_client's own
parser. Nothing sleeps: the exporter is flushed explicitly (in process) or by the server's
shutdown (`keel run`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_server import live_server
from prometheus_client.parser import text_string_to_metric_families
from server_kit import ACTIVATE_OUTAGE, ALICE, EXAMPLE, ROOT_KEY
from telemetry_kit import OBSERVED, MeteredModel, children, one, traced_app

from keel.events.model import ModelCalled
from keel.ids import FakeClock
from keel.llm.port import Usage
from keel.observe.sampling import Sampler
from keel.observe.tracing import TracingConfig
from keel.server.owners import store_key
from keel.testing.otlp_receiver import OtlpReceiver, ReceivedSpan
from keel.testing.scripted import ScriptedModel

SERVER, CLIENT, ERROR = 2, 3, 2
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
POSTCODE_AND_A_MADE_UP_TOOL = {
    "tool_calls": [
        {"name": "set_fields", "arguments": {"fields": {"postcode": "LN4 7QP"}}},
        {"name": "launch_rocket", "arguments": {}},
    ]
}
OUTAGE_SCRIPT = [ACTIVATE_OUTAGE, POSTCODE_AND_A_MADE_UP_TOOL, "ok"]


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


async def _outage_turns(tmp_path: Path, receiver: OtlpReceiver, *, content: bool) -> None:
    tracing = TracingConfig(endpoint=receiver.traces_url, capture_content=content)
    async with traced_app(tmp_path, ScriptedModel(OUTAGE_SCRIPT), tracing=tracing) as app:
        url = "/v1/conversations/c1/messages"
        first = await app.client.post(url, json={"text": "my internet is down"}, headers=ALICE)
        assert first.status_code == 200, first.text
        caller = {"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01", **ALICE}
        second = await app.client.post(url, json={"text": "LN4 7QP"}, headers=caller)
        assert second.status_code == 200, second.text
        assert app.telemetry.flush()


def _request(spans: list[ReceivedSpan]) -> ReceivedSpan:
    """The second message's request span (it continued the caller's trace)."""
    (request,) = [s for s in spans if s.kind == SERVER and s.trace_id == TRACE_ID]
    return request


async def test_a_turn_is_a_span_tree_under_its_http_request(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    await _outage_turns(tmp_path, receiver, content=False)
    spans = receiver.spans
    request = _request(spans)
    assert request.name == "POST /v1/conversations/{conversation_id}/messages"
    assert request.parent_span_id == CALLER_SPAN
    assert request.attributes["http.response.status_code"] == 200
    assert request.resource["service.name"] == "keel"
    (turn,) = children(spans, request)
    assert turn.name == "invoke_agent brightwave-support"
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.conversation.id"] == store_key("alice", "c1")
    assert turn.attributes["keel.turn.stop_reason"] == "end_turn"
    assert request.start_ns <= turn.start_ns <= turn.end_ns <= request.end_ns
    assert "routing_decided" in turn.events
    tree = children(spans, turn)
    names = [s.name for s in tree]
    assert names == [
        "chat scripted",
        "execute_tool set_fields",
        "execute_tool launch_rocket",
        "step report_outage/troubleshoot/check_area",
        "step report_outage/troubleshoot/route_area",
        "step report_outage/troubleshoot/known_outage",
        "step default_completed/main/ask_continue",
    ]
    chat = one(tree, "chat scripted")
    assert chat.kind == CLIENT
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "scripted"
    assert chat.attributes["gen_ai.provider.name"] == "_OTHER"  # no model group names it
    assert chat.attributes["gen_ai.usage.input_tokens"] == 0
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 0
    assert chat.attributes["keel.model.tier"] == "default"
    assert "gen_ai.input.messages" not in chat.attributes  # contents are opt-in
    refused = one(tree, "execute_tool launch_rocket")
    assert refused.attributes["keel.tool.outcome"] == "refused"
    assert refused.attributes["keel.refusal.code"] == "tool.not_offered"
    ran = one(tree, "execute_tool set_fields")
    assert ran.attributes["keel.tool.outcome"] == "ok"
    assert "gen_ai.tool.call.arguments" not in ran.attributes
    step = one(tree, "step report_outage/troubleshoot/check_area")
    (tool,) = children(spans, step)
    assert tool.name == "execute_tool check_area_status"
    assert tool.attributes["gen_ai.tool.name"] == "check_area_status"
    assert step.start_ns <= tool.start_ns <= tool.end_ns <= step.end_ns
    # Commits are folded into their turn (none was slow enough for a span of its own).
    assert not [s for s in tree if s.name == "keel.store.commit"]
    assert int(str(turn.attributes["keel.store.commits"])) > 1
    # seqs 50-96: the turn's stage timings are one stages_timed (event schema v8)
    assert turn.attributes["keel.store.events"] == 47
    total = turn.attributes["keel.store.commit_ms"]
    slowest = turn.attributes["keel.store.commit_max_ms"]
    assert isinstance(total, float) and isinstance(slowest, float)
    assert 0 < slowest <= total
    assert {s.trace_id for s in [turn, *tree, tool]} == {TRACE_ID}


async def test_contents_are_in_the_spans_only_when_enabled(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    await _outage_turns(tmp_path, receiver, content=True)
    spans = receiver.spans
    (turn,) = children(spans, _request(spans))
    chat = one(children(spans, turn), "chat scripted")
    inputs = json.loads(str(chat.attributes["gen_ai.input.messages"]))
    assert inputs[-1] == {"role": "user", "parts": [{"type": "text", "content": "LN4 7QP"}]}
    assert "gen_ai.system_instructions" in chat.attributes
    (output,) = json.loads(str(chat.attributes["gen_ai.output.messages"]))
    called = [p["name"] for p in output["parts"] if p["type"] == "tool_call"]
    assert called == ["set_fields", "launch_rocket"]
    ran = one(children(spans, turn), "execute_tool set_fields")
    assert json.loads(str(ran.attributes["gen_ai.tool.call.arguments"])) == {
        "fields": {"postcode": "LN4 7QP"}
    }


async def test_without_an_endpoint_nothing_is_traced(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    assert TracingConfig.from_env({}) is None
    assert (
        TracingConfig.from_env(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}
        )
        is None
    )
    async with traced_app(tmp_path, ScriptedModel(OUTAGE_SCRIPT), tracing=None) as app:
        reply = await app.client.post(
            "/v1/conversations/c1/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        assert reply.status_code == 200
        assert app.telemetry.tracing is None
    assert receiver.requests == 0


async def test_the_standard_sampler_variables_are_honoured(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    env = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.traces_url}
    tracing = TracingConfig.from_env({**env, "OTEL_TRACES_SAMPLER": "always_off"})
    async with traced_app(tmp_path, ScriptedModel(OUTAGE_SCRIPT), tracing=tracing) as app:
        reply = await app.client.post(
            "/v1/conversations/c1/messages", json={"text": "my internet is down"}, headers=ALICE
        )
        assert reply.status_code == 200
        assert app.telemetry.flush()
        scraped = await app.client.get("/metrics", headers=ROOT_KEY)
    assert receiver.spans == []
    assert 'keel_turns_total{stop_reason="end_turn"} 2.0' in scraped.text  # still counted


async def test_a_sampled_caller_is_followed_by_a_parent_based_ratio(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.traces_url,
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": "0",
    }
    tracing = TracingConfig.from_env(env)
    async with traced_app(tmp_path, ScriptedModel(OUTAGE_SCRIPT), tracing=tracing) as app:
        url = "/v1/conversations/c1/messages"
        first = await app.client.post(url, json={"text": "my internet is down"}, headers=ALICE)
        assert app.telemetry.flush() and receiver.spans == []  # a root: the ratio (0) decides
        unsampled = {"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-00", **ALICE}
        second = await app.client.post(url, json={"text": "LN4 7QP"}, headers=unsampled)
        assert app.telemetry.flush() and receiver.spans == []
        sampled = {"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01", **ALICE}
        third = await app.client.post(url, json={"text": "thanks"}, headers=sampled)
        assert app.telemetry.flush()
    assert [r.status_code for r in (first, second, third)] == [200, 200, 200]
    spans = receiver.spans
    assert spans and {s.trace_id for s in spans} == {TRACE_ID}
    (turn,) = children(spans, _request(spans))
    assert turn.name == "invoke_agent brightwave-support"


def test_the_env_variables_configure_the_exporter() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}
    config = TracingConfig.from_env(base)
    assert config is not None and config.endpoint == "http://collector:4318/v1/traces"
    assert not config.capture_content
    traces = {
        **base,
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://other:4318/custom",
        "OTEL_SERVICE_NAME": "support-bot",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    config = TracingConfig.from_env(traces)
    assert config is not None and config.endpoint == "http://other:4318/custom"
    assert config.service_name == "support-bot" and config.capture_content
    assert TracingConfig.from_env({**base, "OTEL_TRACES_EXPORTER": "none"}) is None
    exporter = {
        **base,
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20abc,x-tenant=t1",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Bearer%20traces",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2.5",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "/etc/ca.pem",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,team=cx%20bots",
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": "0.25",
        "OTEL_BSP_MAX_QUEUE_SIZE": "100",
        "OTEL_BSP_SCHEDULE_DELAY": "250",
    }
    config = TracingConfig.from_env(exporter)
    assert config is not None
    assert dict(config.headers) == {"authorization": "Bearer traces"}  # the signal's wins
    assert config.timeout == 2.5 and config.compression == "gzip"
    assert config.certificate == "/etc/ca.pem"
    assert dict(config.resource) == {"deployment.environment": "prod", "team": "cx bots"}
    assert config.sampler == Sampler(root="traceidratio", rate=0.25, parent_based=True)
    assert config.max_queue == 100 and config.delay == 0.25


BREAKER_SCRIPT = [
    {"tool_calls": [{"name": "activate", "arguments": {"target_id": "breaker"}}]},
    {"tool_calls": [{"name": "fetch", "arguments": {}}, {"name": "launch_rocket"}]},
    {"tool_calls": [{"name": "explode", "arguments": {}}]},
    "That did not work.",
]


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    found: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def _value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples[(name, frozenset(labels.items()))]


async def test_metrics_count_scripted_turns(tmp_path: Path) -> None:
    clock = FakeClock()
    usage = Usage(input_tokens=100, output_tokens=10, cached_input_tokens=40)
    model = MeteredModel(BREAKER_SCRIPT, clock, seconds=1.5, usage=usage)
    async with traced_app(tmp_path, model, tracing=None, clock=clock, project=OBSERVED) as app:
        reply = await app.client.post(
            "/v1/conversations/b1/messages", json={"text": "break it"}, headers=ALICE
        )
        assert reply.status_code == 200, reply.text
        assert (await app.client.get("/metrics")).status_code == 401
        assert (await app.client.get("/metrics", headers=ALICE)).status_code == 403
        scraped = await app.client.get("/metrics", headers=ROOT_KEY)
        log = await app.client.get("/v1/conversations/b1/events", headers=ALICE)
        clock.advance(301)
        later = _samples((await app.client.get("/metrics", headers=ROOT_KEY)).text)
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    got = _samples(scraped.text)
    # The session start is a turn of its own, then the message's turn.
    assert _value(got, "keel_turns_total", stop_reason="end_turn") == 2
    assert _value(got, "keel_turn_duration_seconds_count", stop_reason="end_turn") == 2
    assert _value(got, "keel_turn_duration_seconds_sum", stop_reason="end_turn") == 6.0
    tier = {"tier": "default", "model": "scripted"}
    assert _value(got, "keel_model_calls_total", **tier) == 4
    assert _value(got, "keel_model_call_duration_seconds_sum", **tier) == 6.0
    assert _value(got, "keel_model_call_duration_seconds_bucket", **tier, le="1.0") == 0
    assert _value(got, "keel_model_call_duration_seconds_bucket", **tier, le="2.0") == 4
    assert _value(got, "keel_model_tokens_total", **tier, kind="input") == 400
    assert _value(got, "keel_model_tokens_total", **tier, kind="output") == 40
    assert _value(got, "keel_model_tokens_total", **tier, kind="cached_input") == 160
    costs = [
        e["event"]["cost"] for e in log.json()["events"] if e["event"]["type"] == ModelCalled.kind
    ]
    assert len(costs) == 4 and all(c > 0 for c in costs)
    assert _value(got, "keel_model_cost_total", **tier) == pytest.approx(sum(costs))
    assert _value(got, "keel_tool_runs_total", tool="fetch", outcome="ok") == 1
    assert _value(got, "keel_tool_runs_total", tool="explode", outcome="error") == 1
    assert _value(got, "keel_tool_failures_total", tool="explode", error_code="tool.raised") == 1
    assert _value(got, "keel_tool_calls_refused_total", code="tool.not_offered") == 1
    assert _value(got, "keel_store_commit_duration_seconds_count") > 1
    assert _value(got, "keel_conversations_active") == 1
    assert _value(got, "keel_turns_in_progress") == 0
    assert _value(later, "keel_conversations_active") == 0


def test_a_live_server_exports_to_the_configured_endpoint(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    script = tmp_path / "script.yml"
    script.write_text(json.dumps([ACTIVATE_OUTAGE]), encoding="utf-8")
    key = "ops-secret"
    env = {
        "KEEL_API_KEYS": f"ops:chat,admin:{key}",
        "KEEL_DATABASE_URL": f"sqlite:///{tmp_path / 'keel.db'}",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.base_url,
        "OTEL_SERVICE_NAME": "keel-live",
    }
    args = [str(EXAMPLE), "--model", f"scripted:{script}"]
    with live_server(args, env=env, cwd=tmp_path) as base:
        with httpx.Client(base_url=base, headers={"x-api-key": key}, timeout=30) as http:
            reply = http.post("/v1/conversations/live-1/messages", json={"text": "no internet"})
            scraped = http.get("/metrics")
    # Stopping the server flushed the exporter.
    assert reply.status_code == 200, reply.text
    assert "keel_turns_total" in scraped.text
    spans = receiver.spans
    (request,) = [s for s in spans if s.name.startswith("POST /v1/conversations/")]
    assert request.resource["service.name"] == "keel-live"
    turns = children(spans, request)
    assert [t.name for t in turns] == [
        "invoke_agent brightwave-support",
        "invoke_agent brightwave-support",
    ]
    chats = [s for s in children(spans, turns[1]) if s.name == "chat scripted"]
    assert [c.attributes["keel.model.tier"] for c in chats] == ["router"]
    assert chats[0].attributes["gen_ai.provider.name"] == "_OTHER"
    assert all(s.status_code != ERROR for s in spans)
