"""`keel.observe.otlp` writes what opentelemetry-proto's own classes decode."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from keel.observe import otlp

TRACE = bytes(range(16))
SPAN = bytes(range(8))
PARENT = bytes(range(8, 16))


def _decode(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


def test_spans_resource_and_scope_decode_with_opentelemetry_proto() -> None:
    envelope = otlp.envelope({"service.name": "keel", "workers": 2}, "keel", "1.2.3")
    values = otlp.attributes(
        {
            "text": "héllo",
            "flag": True,
            "one": 1,  # memoised apart from True
            "negative": -5,
            "big": 2**40,
            "ratio": 0.25,
            "reasons": ("stop", "length"),
        }
    ) + otlp.text_field("keel.turn.id", "t" * 200)  # a value longer than 127 bytes
    decided = otlp.event("routing_decided", 0, {"keel.routing.source": "embedding"})
    body = otlp.request(
        envelope,
        [
            otlp.span(
                trace_id=TRACE,
                span_id=SPAN,
                parent_id=PARENT,
                name="chat gpt-4.1",
                kind=otlp.CLIENT,
                start_ns=1_000,
                end_ns=5_000_000_000_000_000_000,
                values=values,
                events=[otlp.event_at(decided, 2_000)],
                error="boom",
            ),
            otlp.span(
                trace_id=TRACE,
                span_id=PARENT,
                parent_id=None,
                name="root",
                kind=otlp.SERVER,
                start_ns=10,
                end_ns=5,  # never before its start
                values=b"",
            ),
        ],
    )
    (resource_spans,) = _decode(body).resource_spans
    resource = {a.key: a.value for a in resource_spans.resource.attributes}
    assert resource["service.name"].string_value == "keel"
    assert resource["workers"].int_value == 2
    (scope_spans,) = resource_spans.scope_spans
    assert (scope_spans.scope.name, scope_spans.scope.version) == ("keel", "1.2.3")
    chat, root = scope_spans.spans
    assert (chat.trace_id, chat.span_id, chat.parent_span_id) == (TRACE, SPAN, PARENT)
    assert chat.name == "chat gpt-4.1" and chat.kind == otlp.CLIENT
    assert (chat.start_time_unix_nano, chat.end_time_unix_nano) == (1_000, 5 * 10**18)
    got = {a.key: a.value for a in chat.attributes}
    assert got["text"].string_value == "héllo"
    assert got["flag"].WhichOneof("value") == "bool_value" and got["flag"].bool_value
    assert got["one"].WhichOneof("value") == "int_value" and got["one"].int_value == 1
    assert got["negative"].int_value == -5 and got["big"].int_value == 2**40
    assert got["ratio"].double_value == 0.25
    assert [v.string_value for v in got["reasons"].array_value.values] == ["stop", "length"]
    assert got["keel.turn.id"].string_value == "t" * 200
    (event,) = chat.events
    assert (event.name, event.time_unix_nano) == ("routing_decided", 2_000)
    assert event.attributes[0].value.string_value == "embedding"
    assert (chat.status.code, chat.status.message) == (otlp.STATUS_ERROR, "boom")
    assert root.parent_span_id == b"" and root.kind == otlp.SERVER
    assert root.end_time_unix_nano == root.start_time_unix_nano == 10
    assert root.status.code == otlp.STATUS_UNSET


def test_a_float_field_is_its_prefix_and_eight_bytes() -> None:
    field = otlp.field("keel.stage.route.ms", 1.5)
    assert field == otlp.float_prefix("keel.stage.route.ms") + otlp.pack_double(1.5)
    assert otlp.field("n", True) != otlp.field("n", 1)


def test_text_fields_and_event_parts_write_what_the_general_encoders_do() -> None:
    for text in ("call_1", "é" * 40, "t" * 110, "t" * 126, "t" * 200):
        assert otlp.text_field("gen_ai.tool.call.id", text) == otlp.attributes(
            {"gen_ai.tool.call.id": text}
        )
    values: dict[str, otlp.AttributeValue] = {"keel.routing.source": "router", "hit": True}
    head, tail = otlp.event_parts("routing_decided", values)
    encoded = otlp.event("routing_decided", 2_000, values)
    assert head + otlp.pack_fixed64(2_000) + tail == otlp.event_fields([encoded])
