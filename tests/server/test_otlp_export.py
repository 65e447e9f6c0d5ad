"""The span exporter against a real OTLP/HTTP receiver on a loopback port: the standard
variables' headers and compression, batches, a full queue and refused exports counted."""

from __future__ import annotations

import base64
import http.client
import logging
import select
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from opentelemetry.context import Context

from keel.ids import SystemClock
from keel.observe import otlp
from keel.observe.export import ExportError, OtlpHttp, Transport
from keel.observe.span_ids import Parent, new_span_id
from keel.observe.tap import Telemetry
from keel.observe.tracing import ServerSpan, Tracing, TracingConfig
from keel.testing.otlp_receiver import OtlpReceiver

TRACE = bytes(range(1, 17))


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


def _spans(count: int, name: str = "s") -> list[bytes]:
    return [
        otlp.span(
            trace_id=TRACE,
            span_id=(n + 1).to_bytes(8, "big"),
            parent_id=None,
            name=f"{name} {n}",
            kind=otlp.INTERNAL,
            start_ns=1,
            end_ns=2,
            values=otlp.attributes({"n": n}),
        )
        for n in range(count)
    ]


def test_headers_compression_and_resource_from_the_standard_variables(
    receiver: OtlpReceiver,
) -> None:
    config = TracingConfig.from_env(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.base_url,
            "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc,x-tenant=t1",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
            "OTEL_SERVICE_NAME": "support-bot",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod",
        }
    )
    assert config is not None
    tracing = Tracing(config)
    try:
        assert tracing.export(_spans(3))
        assert tracing.flush()
    finally:
        tracing.close()
    (headers,) = receiver.headers
    assert headers["authorization"] == "Bearer abc" and headers["x-tenant"] == "t1"
    assert headers["content-encoding"] == "gzip"
    assert headers["content-type"] == "application/x-protobuf"
    spans = receiver.spans
    assert [s.name for s in spans] == ["s 0", "s 1", "s 2"]
    assert spans[0].resource["service.name"] == "support-bot"
    assert spans[0].resource["deployment.environment"] == "prod"
    assert tracing.stats().exported == 3


def test_spans_go_in_batches_of_at_most_max_batch(receiver: OtlpReceiver) -> None:
    tracing = Tracing(TracingConfig(endpoint=receiver.traces_url, max_batch=4, delay=60.0))
    try:
        for _ in range(5):
            assert tracing.export(_spans(2))
        assert tracing.flush()
    finally:
        tracing.close()
    assert len(receiver.spans) == 10
    assert receiver.requests == 3  # 4 + 4 + 2


def test_a_full_queue_drops_the_run_and_counts_it(
    receiver: OtlpReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    # A long delay and a large batch: nothing leaves the queue until the flush.
    config = TracingConfig(endpoint=receiver.traces_url, max_queue=5, max_batch=100, delay=60.0)
    telemetry = Telemetry(clock=SystemClock(), tracing=config)
    telemetry.open(agent="a", provider_of=lambda _model, _tier: "_OTHER")
    assert telemetry.tracing is not None
    with caplog.at_level(logging.WARNING, logger="keel.observe"):
        assert telemetry.tracing.export(_spans(3))
        assert not telemetry.tracing.export(_spans(3, "late"))  # 6 > 5: dropped whole
    assert "dropped 3 spans (the export queue is full" in caplog.text
    assert telemetry.flush()
    scraped = telemetry.metrics.exposition().decode()
    telemetry.close()
    assert [s.name for s in receiver.spans] == ["s 0", "s 1", "s 2"]
    assert 'keel_trace_spans_dropped_total{reason="queue_full"} 3.0' in scraped
    assert "keel_trace_spans_exported_total 3.0" in scraped


def test_a_refused_export_is_dropped_and_a_busy_one_retried(
    receiver: OtlpReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    tracing = Tracing(TracingConfig(endpoint=receiver.traces_url, timeout=10.0, batch=False))
    try:
        receiver.fail_next(400)
        with caplog.at_level(logging.WARNING, logger="keel.observe"):
            assert tracing.export(_spans(2, "refused"))
            assert tracing.flush()
        assert "export failed: HTTP 400" in caplog.text
        receiver.fail_next(503)  # retried after a backoff, then delivered
        assert tracing.export(_spans(1, "retried"))
        assert tracing.flush()
    finally:
        tracing.close()
    assert [s.name for s in receiver.spans] == ["retried 0"]
    assert len(receiver.headers) == 3  # refused, busy, delivered
    stats = tracing.stats()
    assert (stats.exported, stats.dropped_export_failed) == (1, 2)


def test_an_unreachable_collector_never_blocks_the_caller() -> None:
    # Nothing listens on port 9 of loopback: the export fails in the thread, not here.
    tracing = Tracing(TracingConfig(endpoint="http://127.0.0.1:9/v1/traces", timeout=0.2))
    try:
        assert tracing.export(_spans(2))
        assert tracing.flush(timeout=10.0)
    finally:
        tracing.close()
    assert tracing.stats().dropped_export_failed == 2


def test_spans_queued_unbuilt_are_encoded_on_the_exporting_thread(
    receiver: OtlpReceiver, caplog: pytest.LogCaptureFixture
) -> None:
    built_on: list[str] = []

    def build() -> list[bytes]:
        built_on.append(threading.current_thread().name)
        return _spans(2, "later")

    def broken() -> list[bytes]:
        raise ValueError("cannot encode")

    tracing = Tracing(TracingConfig(endpoint=receiver.traces_url, max_queue=4, delay=60.0))
    try:
        with caplog.at_level(logging.WARNING, logger="keel.observe"):
            assert tracing.export_later(2, build)
            assert tracing.export_later(1, broken)
            assert not tracing.export_later(2, build)  # 2 + 1 + 2 > 4: dropped whole
            assert built_on == []  # nothing encoded on the caller's thread
            assert tracing.export(_spans(1))
            assert tracing.flush()
    finally:
        tracing.close()
    assert built_on == ["keel-otlp-export"]
    assert sorted(s.name for s in receiver.spans) == ["later 0", "later 1", "s 0"]
    assert "encoding spans for export" in caplog.text
    stats = tracing.stats()
    assert (stats.exported, stats.dropped_queue_full, stats.dropped_export_failed) == (3, 2, 1)


@pytest.mark.parametrize("endpoint", ["localhost:4318/v1/traces", "http://localhost:43x8/v1"])
def test_an_endpoint_that_is_no_http_url_fails_each_export_logged(
    endpoint: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A common slip (no scheme): the server still starts, and every export says why it failed.
    tracing = Tracing(TracingConfig(endpoint=endpoint, timeout=0.2, batch=False))
    try:
        with caplog.at_level(logging.WARNING, logger="keel.observe"):
            assert tracing.export(_spans(2))
            assert tracing.flush()
    finally:
        tracing.close()
    assert tracing.stats().dropped_export_failed == 2
    assert f"export failed: the endpoint {endpoint!r}" in caplog.text


class _ClosingCollector:
    """Answers each connection's first request as HTTP/1.1 with keep-alive, then closes
    that connection: the exporter's kept connection goes stale between batches."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.bodies: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection, connection.makefile("rb") as reader:
                length = 0
                while (line := reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                self.bodies.append(reader.read(length))
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self.server.close()


def test_a_kept_alive_connection_the_collector_closed_is_replaced_at_once() -> None:
    collector = _ClosingCollector()
    stopping = threading.Event()
    # A timeout shorter than the first retry's backoff: only an immediate reconnect delivers.
    http = OtlpHttp(
        Transport(endpoint=f"http://127.0.0.1:{collector.port}/v1/traces", headers={}, timeout=0.4),
        stopping=stopping,
    )
    try:
        http.send(b"first")
        http.send(b"second")  # over the connection the collector closed after "first"
    finally:
        http.close()
        collector.close()
    assert collector.bodies == [b"first", b"second"]


def test_a_receiver_that_decodes_later_gives_the_same_spans() -> None:
    with OtlpReceiver(decode_later=True) as later:
        tracing = Tracing(TracingConfig(endpoint=later.traces_url, batch=False))
        try:
            assert tracing.export(_spans(3))
            assert tracing.flush()
        finally:
            tracing.close()
        assert later.requests == 1
        assert [s.name for s in later.spans] == ["s 0", "s 1", "s 2"]
        later.clear()
        assert later.spans == []


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[OtlpReceiver, Path]]:
    """The receiver behind TLS, with a self-signed certificate for 127.0.0.1 (openssl)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*command, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    receiver = OtlpReceiver()
    server = receiver._server
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with receiver:
        yield receiver, cert


def _https(receiver: OtlpReceiver, certificate: Path | None, *, timeout: float) -> OtlpHttp:
    port = receiver.base_url.rsplit(":", 1)[1]
    transport = Transport(
        endpoint=f"https://127.0.0.1:{port}/v1/traces",
        headers={},
        timeout=timeout,
        certificate=str(certificate) if certificate is not None else None,
    )
    return OtlpHttp(transport, stopping=threading.Event())


def test_https_with_the_configured_certificate(tls_receiver: tuple[OtlpReceiver, Path]) -> None:
    receiver, cert = tls_receiver
    http = _https(receiver, cert, timeout=10.0)  # a handshake on a busy machine
    try:
        http.send(otlp.request(otlp.envelope({"service.name": "s"}, "keel", "1"), _spans(2)))
    finally:
        http.close()
    assert [s.name for s in receiver.spans] == ["s 0", "s 1"]


def test_https_refuses_a_certificate_it_does_not_trust(
    tls_receiver: tuple[OtlpReceiver, Path],
) -> None:
    receiver, _cert = tls_receiver
    # The default bundle does not hold the self-signed one; a short timeout: no retry waits.
    http = _https(receiver, None, timeout=0.4)
    try:
        with pytest.raises(ExportError, match="CERTIFICATE_VERIFY_FAILED"):
            http.send(b"")
    finally:
        http.close()
    assert receiver.spans == []


class _Proxy:
    """A forward proxy on loopback: plain requests in absolute form are forwarded, CONNECT
    is tunnelled; `seen` is each request line it was given and its Proxy-Authorization."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                proxy.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))
                target = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                upstream = http.client.HTTPConnection(target.hostname or "", target.port)
                upstream.request(
                    "POST", target.path, body=body, headers={"content-length": str(len(body))}
                )
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                self.send_response(answer.status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_CONNECT(self) -> None:
                proxy.seen.append((self.requestline, self.headers.get("Proxy-Authorization")))
                host, _, port = self.path.rpartition(":")
                upstream = socket.create_connection((host, int(port)))
                self.send_response(200)
                self.end_headers()
                sockets = [self.connection, upstream]
                while True:
                    ready, _, _ = select.select(sockets, [], [], 5)
                    if not ready:
                        break
                    for source in ready:
                        data = source.recv(65536)
                        if not data:
                            upstream.close()
                            return
                        (upstream if source is self.connection else self.connection).sendall(data)
                upstream.close()

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://user:p%40ss@127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_proxy_the_environment_names_is_used_and_no_proxy_bypasses_it(
    scheme: str,
    receiver: OtlpReceiver,
    tls_receiver: tuple[OtlpReceiver, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target, cert = (receiver, None) if scheme == "http" else tls_receiver
    port = target.base_url.rsplit(":", 1)[1]
    endpoint = f"{scheme}://127.0.0.1:{port}/v1/traces"
    proxy = _Proxy()
    monkeypatch.setenv(f"{scheme}_proxy", proxy.url)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    body = otlp.request(otlp.envelope({"service.name": "s"}, "keel", "1"), _spans(1))
    try:
        transport = Transport(
            endpoint=endpoint, headers={}, timeout=5.0, certificate=str(cert) if cert else None
        )
        http = OtlpHttp(transport, stopping=threading.Event())
        http.send(body)
        http.close()
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        bypassing = OtlpHttp(transport, stopping=threading.Event())
        bypassing.send(body)
        bypassing.close()
    finally:
        proxy.close()
    tunnel = f"CONNECT 127.0.0.1:{port} HTTP/1.0"  # http.client's CONNECT line
    expected = f"POST {endpoint} HTTP/1.1" if scheme == "http" else tunnel
    assert proxy.seen == [(expected, "Basic " + base64.b64encode(b"user:p@ss").decode())]
    assert len(target.spans) == 2  # through the proxy, then around it


def _run_spans(name: str) -> Callable[[Parent], list[bytes]]:
    def build(under: Parent) -> list[bytes]:
        assert under.span_id is not None
        return [
            otlp.span(
                trace_id=under.trace_id.to_bytes(16, "big"),
                span_id=new_span_id().to_bytes(8, "big"),
                parent_id=under.span_id.to_bytes(8, "big"),
                name=name,
                kind=otlp.INTERNAL,
                start_ns=2,
                end_ns=3,
                values=otlp.attributes({}),
            )
        ]

    return build


def test_a_run_goes_with_its_request_span_and_one_that_outlives_it_alone(
    receiver: OtlpReceiver,
) -> None:
    tracing = Tracing(TracingConfig(endpoint=receiver.traces_url, max_queue=4, delay=60.0))
    try:
        request = ServerSpan(tracing, "POST /x", Context(), start_ns=1, attributes={})
        assert tracing.export_run(request.context, 1, _run_spans("inside"))
        assert tracing.flush()
        assert receiver.spans == []  # the run waits for its request's span
        request.end(4)
        assert tracing.export_run(request.context, 1, _run_spans("after"))  # it outlived it
        crowded = ServerSpan(tracing, "POST /y", Context(), start_ns=1, attributes={})
        assert tracing.export_run(crowded.context, 3, _run_spans("crowded"))
        crowded.end(4)  # 3 queued + 1 + 3 > 4: the request and its run are dropped together
        assert tracing.flush()
    finally:
        tracing.close()
    by_name = {s.name: s for s in receiver.spans}
    assert sorted(by_name) == ["POST /x", "after", "inside"]
    server = by_name["POST /x"]
    for name in ("inside", "after"):
        assert by_name[name].parent_span_id == server.span_id
        assert by_name[name].trace_id == server.trace_id
    stats = tracing.stats()
    assert (stats.exported, stats.dropped_queue_full) == (3, 4)
