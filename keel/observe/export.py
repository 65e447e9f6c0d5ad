"""`BatchExporter`: encoded spans queued by the server, posted in batches by one thread.

`put` (the event loop's side) only appends the run's span bytes to a bounded queue under
a lock: it never waits for the network. The thread posts a batch when `max_batch` spans
are waiting or `delay` seconds after the first one, and everything on `flush` and
`close`. A full queue drops the run's spans; a batch the endpoint refused (or that could
not be sent after its retries) is dropped too. Drops are counted (`stats`, the metrics'
`keel_trace_spans_dropped_total`) and logged, at most once a minute with the count since.

`OtlpHttp` is the transport: POST to the OTLP/HTTP traces URL with the configured headers,
compression and TLS files, retried with backoff on 429, 502, 503, 504 and connection
errors within the timeout, as the specification asks.
"""

from __future__ import annotations

import gzip
import logging
import ssl
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import httpx

_log = logging.getLogger("keel.observe")

_RETRYABLE = {408, 429, 502, 503, 504}
_LOG_EVERY_SECONDS = 60.0


class ExportError(Exception):
    """A batch could not be delivered."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ExportStats:
    """What the exporter did so far."""

    exported: int
    dropped_queue_full: int
    dropped_export_failed: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Transport:
    """Where and how batches are posted (the standard OTLP exporter variables)."""

    endpoint: str
    headers: Mapping[str, str]
    timeout: float
    """Seconds for one export, retries included."""

    compression: str = "none"
    """`none`, `gzip` or `deflate`."""

    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None


class OtlpHttp:
    """Posts request bodies to an OTLP/HTTP endpoint (one keep-alive connection)."""

    def __init__(self, transport: Transport, *, stopping: threading.Event) -> None:
        self.transport = transport
        self._stopping = stopping
        verify: ssl.SSLContext | bool = True
        if transport.certificate or transport.client_certificate:
            verify = ssl.create_default_context(cafile=transport.certificate)
            if transport.client_certificate:
                verify.load_cert_chain(transport.client_certificate, transport.client_key)
        self._client = httpx.Client(timeout=transport.timeout, verify=verify)
        self._headers = {
            **{k.lower(): v for k, v in transport.headers.items()},
            "content-type": "application/x-protobuf",
        }
        if transport.compression in ("gzip", "deflate"):
            self._headers["content-encoding"] = transport.compression

    def send(self, body: bytes) -> None:
        """Deliver `body`, retrying within the timeout; raises `ExportError`."""
        if self.transport.compression == "gzip":
            body = gzip.compress(body, compresslevel=6)
        elif self.transport.compression == "deflate":
            body = zlib.compress(body)
        deadline = time.monotonic() + self.transport.timeout
        delay = 0.5
        while True:
            left = deadline - time.monotonic()
            try:
                answer = self._client.post(
                    self.transport.endpoint,
                    content=body,
                    headers=self._headers,
                    timeout=max(0.001, left),
                )
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                retry = not isinstance(exc, httpx.TimeoutException)
            else:
                if answer.status_code < 300:
                    return
                problem = f"HTTP {answer.status_code}: {answer.text[:200]}"
                retry = answer.status_code in _RETRYABLE
            if not retry or time.monotonic() + delay >= deadline:
                raise ExportError(problem)
            if self._stopping.wait(delay):  # closing: no more retries
                raise ExportError(f"{problem} (not retried: exporter closing)")
            delay *= 2

    def close(self) -> None:
        self._client.close()


class BatchExporter:
    """A bounded queue of encoded spans and the thread that posts them."""

    def __init__(
        self,
        send: Callable[[Sequence[bytes]], None],
        *,
        max_queue: int = 2048,
        max_batch: int = 512,
        delay: float = 5.0,
        name: str = "keel-otlp-export",
    ) -> None:
        """`send(spans)` delivers one batch or raises; `max_queue` bounds the spans waiting."""
        self._send = send
        self._max_queue = max(1, max_queue)
        self._max_batch = max(1, max_batch)
        self._delay = max(0.0, delay)
        self._queue: deque[bytes] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._put = 0
        """Spans accepted so far."""
        self._done = 0
        """Spans accepted and then sent or dropped."""
        self._flush_to = 0
        self._closing = False
        self._exported = 0
        self._full = 0
        self._failed = 0
        self._unlogged = 0
        self._logged_at = -_LOG_EVERY_SECONDS
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, spans: Sequence[bytes]) -> bool:
        """Queue one run's spans; False (and counted) when they do not fit."""
        if not spans:
            return True
        with self._lock:
            if self._closing or len(self._queue) + len(spans) > self._max_queue:
                self._full += len(spans)
                self._dropped_locked(len(spans), "the export queue is full")
                return False
            first = not self._queue
            self._queue.extend(spans)
            self._put += len(spans)
            if first or len(self._queue) >= self._max_batch:
                self._wake.notify()
        return True

    def stats(self) -> ExportStats:
        with self._lock:
            return ExportStats(
                exported=self._exported,
                dropped_queue_full=self._full,
                dropped_export_failed=self._failed,
            )

    def flush(self, timeout: float = 10.0) -> bool:
        """Send everything queued now; False if that did not finish within `timeout`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            target = self._put
            self._flush_to = max(self._flush_to, target)
            self._wake.notify_all()
            while self._done < target:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    return False
                self._wake.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Send what is queued, then stop the thread."""
        self.flush(timeout)
        with self._lock:
            self._closing = True
            self._wake.notify_all()
        self._thread.join(timeout)

    def _dropped_locked(self, count: int, why: str) -> None:
        self._unlogged += count
        now = time.monotonic()
        if now - self._logged_at >= _LOG_EVERY_SECONDS:
            _log.warning(
                "dropped %d spans (%s; counted in keel_trace_spans_dropped_total)",
                self._unlogged,
                why,
            )
            self._unlogged = 0
            self._logged_at = now

    def _take(self) -> list[bytes] | None:
        """The next batch, waiting for one; None once closing with nothing left."""
        with self._lock:
            waited_from: float | None = None
            while True:
                flushing = self._flush_to > self._done
                if self._queue and (
                    flushing or self._closing or len(self._queue) >= self._max_batch
                ):
                    break
                if self._closing:
                    return None
                if self._queue:
                    now = time.monotonic()
                    waited_from = now if waited_from is None else waited_from
                    left = self._delay - (now - waited_from)
                    if left <= 0:
                        break
                    self._wake.wait(left)
                else:
                    waited_from = None
                    self._wake.wait()
            count = min(self._max_batch, len(self._queue))
            return [self._queue.popleft() for _ in range(count)]

    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            failure: str | None = None
            try:
                self._send(batch)
            except Exception as exc:  # the exporter must outlive any failure
                failure = str(exc) or type(exc).__name__
            with self._lock:
                if failure is None:
                    self._exported += len(batch)
                else:
                    self._failed += len(batch)
                    self._dropped_locked(len(batch), f"export failed: {failure}")
                self._done += len(batch)
                self._wake.notify_all()
