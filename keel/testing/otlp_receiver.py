"""`OtlpReceiver`: a local OTLP/HTTP traces endpoint that decodes what it is sent.

A real HTTP server on a loopback port (a thread), answering `POST /v1/traces` as a
collector does: the body is an `ExportTraceServiceRequest` in protobuf, decoded with
opentelemetry-proto's own classes; each span is kept as a `ReceivedSpan` (ids in hex,
attributes as Python values). Tests check the span tree of real turns with it; the peers
benchmark points its telemetry case at one.

    with OtlpReceiver() as receiver:
        ...  # OTEL_EXPORTER_OTLP_ENDPOINT=receiver.base_url
        receiver.spans
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

AttributeValue = str | bool | int | float | tuple[object, ...] | None


@dataclass(frozen=True, kw_only=True, slots=True)
class ReceivedSpan:
    """One span as the receiver decoded it."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    """Empty for a root span."""

    kind: int
    """OTLP's SpanKind number (1 internal, 2 server, 3 client)."""

    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttributeValue]
    status_code: int
    """0 unset, 1 ok, 2 error."""

    events: tuple[str, ...]
    resource: Mapping[str, AttributeValue]


def _value(value: AnyValue) -> AttributeValue:
    which = value.WhichOneof("value")
    if which == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    if which is None:
        return None
    result: AttributeValue = getattr(value, which)
    return result


def _attributes(pairs: Iterator[KeyValue]) -> dict[str, AttributeValue]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[ReceivedSpan]:
    """The spans of one export request body (protobuf)."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = _attributes(iter(resource_spans.resource.attributes))
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        kind=int(span.kind),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes=_attributes(iter(span.attributes)),
                        status_code=int(span.status.code),
                        events=tuple(event.name for event in span.events),
                        resource=resource,
                    )
                )
    return spans


class OtlpReceiver:
    """A loopback OTLP/HTTP receiver for traces; `spans` is everything received so far."""

    def __init__(self, host: str = "127.0.0.1", *, decode_later: bool = False) -> None:
        """`decode_later`: keep each accepted body and decode it when `spans` is read
        (a receiver beside a benchmark, whose decoding must not share the machine with
        the timed runs)."""
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self._bodies: list[bytes] | None = [] if decode_later else None
        self.requests = 0
        """Export requests answered with 200."""
        self.headers: list[dict[str, str]] = []
        """The headers of every export request (names lower-cased), refused ones too."""
        self._failures: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                failure = receiver._seen({k.lower(): v for k, v in self.headers.items()})
                if failure is not None:
                    self.send_response(failure)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._received(body)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next `times` export requests with `status` (and keep nothing)."""
        with self._lock:
            self._failures.extend([status] * times)

    def _seen(self, headers: dict[str, str]) -> int | None:
        with self._lock:
            self.headers.append(headers)
            return self._failures.pop(0) if self._failures else None

    def _received(self, body: bytes) -> None:
        spans = decode(body) if self._bodies is None else []
        with self._lock:
            if self._bodies is not None:
                self._bodies.append(body)
            self._spans.extend(spans)
            self.requests += 1

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (for `OTEL_EXPORTER_OTLP_ENDPOINT`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def traces_url(self) -> str:
        """The traces endpoint (`.../v1/traces`)."""
        return f"{self.base_url}/v1/traces"

    @property
    def spans(self) -> list[ReceivedSpan]:
        """Every span received, in arrival order."""
        with self._lock:
            if self._bodies:
                self._spans.extend(span for body in self._bodies for span in decode(body))
                self._bodies.clear()
            return list(self._spans)

    def clear(self) -> None:
        """Forget the spans received so far."""
        with self._lock:
            self._spans.clear()
            if self._bodies is not None:
                self._bodies.clear()

    def start(self) -> OtlpReceiver:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
