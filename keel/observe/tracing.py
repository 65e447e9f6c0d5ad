"""Tracing's configuration and pipeline: spans encoded as OTLP protobuf, exported in batches.

Off unless an OTLP endpoint is configured with the standard variables
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`);
`OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off. Export is OTLP over
HTTP with protobuf bodies; `TracingConfig.from_env` reads the other standard variables
too: headers, timeout (seconds, as the Python SDK reads it), compression, certificates,
the sampler (`sampling`), the resource (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`)
and the batch processor's (`OTEL_BSP_*`). Prompt and completion contents go into spans
only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

No OpenTelemetry SDK: a run's spans are written as protobuf bytes straight from its events
(`turn_spans`, `otlp`) and queued for `export.BatchExporter`'s thread. Only the API's
context is used, so the request span (`ServerSpan`) is the current span for anything
else that reads it, and W3C `traceparent` propagation is the API's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import unquote

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import DEFAULT_TRACE_STATE, NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.util.re import parse_env_headers

from keel import __version__
from keel.observe import otlp
from keel.observe.export import BatchExporter, ExportStats, Later, OtlpHttp, Transport
from keel.observe.sampling import Sampler
from keel.observe.span_ids import Parent, new_span_id, new_trace_id

_log = logging.getLogger("keel.observe")

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for message contents (they hold personal data)."""

_TRUE = {"1", "true", "yes", "on"}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)


def _signal(env: Mapping[str, str], name: str) -> str:
    """`OTEL_EXPORTER_OTLP_TRACES_{name}`, else `OTEL_EXPORTER_OTLP_{name}`, stripped."""
    found = env.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}", "").strip()
    return found or env.get(f"OTEL_EXPORTER_OTLP_{name}", "").strip()


def _number(raw: str, name: str, default: float) -> float:
    """`raw` as a number of 0 or more, `default` when empty (or invalid, logged)."""
    raw = raw.strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        _log.warning("%s=%r is not a number of 0 or more: using %g", name, raw, default)
        return default
    return value


def _env_number(env: Mapping[str, str], name: str, default: float) -> float:
    return _number(env.get(name, ""), name, default)


def _resource(env: Mapping[str, str]) -> dict[str, str]:
    """`OTEL_RESOURCE_ATTRIBUTES` (k=v, comma-separated, values URL-encoded)."""
    found: dict[str, str] = {}
    for item in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, equals, value = item.partition("=")
        if equals and key.strip():
            found[key.strip()] = unquote(value.strip())
        elif item.strip():
            _log.warning("OTEL_RESOURCE_ATTRIBUTES item %r is not key=value: ignored", item)
    return found


@dataclass(frozen=True, kw_only=True, slots=True)
class TracingConfig:
    """Where spans go and what they may hold."""

    endpoint: str
    """The OTLP/HTTP traces URL (`http://collector:4318/v1/traces`)."""

    service_name: str = "keel"
    capture_content: bool = False
    """Put prompts, completions, tool arguments and results into spans (personal data)."""

    batch: bool = True
    """Wait up to `delay` to fill a batch (False: post whatever is queued at once, still
    from the exporting thread, for tests and short-lived tools)."""

    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 10.0
    """Seconds for one export, retries included."""

    compression: str = "none"
    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    sampler: Sampler = field(default_factory=Sampler)
    resource: Mapping[str, str] = field(default_factory=dict)
    """More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`)."""

    max_queue: int = 2048
    """Spans waiting for export at most; a run that does not fit is dropped (counted)."""

    max_batch: int = 512
    delay: float = 5.0
    """Seconds a span waits at most before its batch is posted."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TracingConfig | None:
        """The configuration the standard OpenTelemetry variables describe, or None (off)."""
        if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
            return None
        exporters = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower()
        if exporters == "none":
            return None
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
        if not endpoint:
            base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
            if not base:
                return None
            endpoint = f"{base.removesuffix('/')}/v1/traces"
        protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
            "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
        )
        if protocol.strip() != "http/protobuf":
            _log.warning("OTLP protocol %r is not supported: exporting http/protobuf", protocol)
        compression = _signal(env, "COMPRESSION").lower() or "none"
        if compression not in ("none", "gzip", "deflate"):
            _log.warning("OTLP compression %r is not supported: sending uncompressed", compression)
            compression = "none"
        return cls(
            endpoint=endpoint,
            service_name=env.get("OTEL_SERVICE_NAME", "").strip() or "keel",
            capture_content=env.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _TRUE,
            headers=parse_env_headers(_signal(env, "HEADERS"), liberal=True),
            timeout=_number(_signal(env, "TIMEOUT"), "OTEL_EXPORTER_OTLP_TIMEOUT", 10.0),
            compression=compression,
            certificate=_signal(env, "CERTIFICATE") or None,
            client_certificate=_signal(env, "CLIENT_CERTIFICATE") or None,
            client_key=_signal(env, "CLIENT_KEY") or None,
            sampler=Sampler.from_env(env),
            resource=_resource(env),
            max_queue=int(_env_number(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048)),
            max_batch=int(_env_number(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)),
            delay=_env_number(env, "OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000,
        )


class Tracing:
    """The app's span pipeline: sampling, the encoded resource, the exporting thread."""

    def __init__(self, config: TracingConfig, *, send: OtlpHttp | None = None) -> None:
        self.config = config
        self.sampler = config.sampler
        resource: dict[str, otlp.AttributeValue] = {
            "telemetry.sdk.language": "python",
            "telemetry.sdk.name": "keel",
            "telemetry.sdk.version": __version__,
            **config.resource,
            "service.name": config.service_name,
            "service.version": __version__,
        }
        self.envelope = otlp.envelope(resource, "keel", __version__)
        self._stopping = threading.Event()
        self._http = send or OtlpHttp(
            Transport(
                endpoint=config.endpoint,
                headers=config.headers,
                timeout=config.timeout,
                compression=config.compression,
                certificate=config.certificate,
                client_certificate=config.client_certificate,
                client_key=config.client_key,
            ),
            stopping=self._stopping,
        )
        self._known: tuple[Context, Parent, ServerSpan] | None = None
        """The last server span's context, the parent its children get and the span
        (`parent` and `export_run` answer for it without reading the context)."""
        self.exporter = BatchExporter(
            self._post,
            max_queue=config.max_queue,
            max_batch=config.max_batch,
            delay=config.delay if config.batch else 0.0,
        )

    def _post(self, spans: Sequence[bytes]) -> None:
        self._http.send(otlp.request(self.envelope, spans))

    def parent(self, context: Context | None) -> Parent:
        """The parent a span started under `context` gets, sampled or not (a new trace
        when `context` has no valid span)."""
        known = self._known
        if known is not None and known[0] is context:
            return known[1]
        if context:  # an empty context holds no span: a new trace
            found = trace.get_current_span(context).get_span_context()
            if found.is_valid:
                sampled = self.sampler.sampled(found.trace_id, found.trace_flags.sampled)
                return Parent(found.trace_id, found.span_id, sampled)
        trace_id = new_trace_id()
        return Parent(trace_id, None, self.sampler.sampled(trace_id, None))

    def export_run(
        self, context: Context, count: int, build: Callable[[Parent], Sequence[bytes]]
    ) -> bool:
        """Queue the `count` spans of a run started under `context`, which `build(parent)`
        encodes on the exporting thread (nothing when the trace is not sampled): with the
        request span's own when that span is the run's parent and has not ended (one queue
        entry per request), else alone; False when they were dropped."""
        known = self._known
        if known is not None and known[0] is context:
            under, span = known[1], known[2]
        else:
            under, span = self.parent(context), None
        if not under.sampled:  # not sampled (OTEL_TRACES_SAMPLER): nothing is built
            return True
        later = Later(max(1, count), partial(build, under))
        if span is not None and span.carry(later):
            return True
        return self.exporter.put_later((later,))

    def export(self, spans: Sequence[bytes]) -> bool:
        """Queue encoded spans (`otlp.span`); False when they were dropped."""
        return self.exporter.put(spans)

    def export_later(self, count: int, build: Callable[[], Sequence[bytes]]) -> bool:
        """Queue `count` spans that `build` encodes on the exporting thread; False when
        they were dropped."""
        return self.exporter.put_later((Later(max(1, count), build),))

    def stats(self) -> ExportStats:
        return self.exporter.stats()

    def flush(self, timeout: float = 10.0) -> bool:
        """Export every span queued so far; False if that did not finish in time."""
        return self.exporter.flush(timeout)

    def close(self) -> None:
        """Export what is left and stop the exporter."""
        self.exporter.close(self.config.timeout)
        self._stopping.set()
        self._http.close()


class ServerSpan:
    """A request's span: the current span (in the API's context) while the request runs,
    encoded and queued when it ends (when sampled)."""

    __slots__ = (
        "_end_ns",
        "_runs",
        "_tracing",
        "attributes",
        "context",
        "error",
        "events",
        "name",
        "parent",
        "span_id",
        "start_ns",
    )

    def __init__(
        self,
        tracing: Tracing,
        name: str,
        parent_context: Context,
        *,
        start_ns: int,
        attributes: dict[str, otlp.AttributeValue],
    ) -> None:
        self._tracing = tracing
        self.name = name
        self.parent = tracing.parent(parent_context)
        self.span_id = new_span_id()
        self.start_ns = start_ns
        self._end_ns = start_ns
        self.attributes = attributes
        self.error: str | None = None
        """An error status's message, when the request failed."""
        self.events: list[bytes] = []
        """Encoded span events (`otlp.event`)."""
        self._runs: list[Later] | None = []
        """The spans of the runs that ended under this span, queued with it (None once
        it has ended)."""
        trace_id, sampled = self.parent.trace_id, self.parent.sampled
        flags = _SAMPLED if sampled else _NOT_SAMPLED
        own = SpanContext(trace_id, self.span_id, False, flags, DEFAULT_TRACE_STATE)
        self.context = trace.set_span_in_context(NonRecordingSpan(own), parent_context)
        # The request's turns ask for their parent under this context (`Tracing.parent`).
        tracing._known = (self.context, Parent(trace_id, self.span_id, sampled), self)

    def carry(self, run: Later) -> bool:
        """Queue a run's spans with this span's own when it ends; False once it has ended."""
        runs = self._runs
        if runs is None:
            return False
        runs.append(run)
        return True

    def end(self, end_ns: int) -> None:
        """Queue the span, and the runs it carries, encoded on the exporting thread
        (nothing when its trace is not sampled); its attributes and events must not change
        after this."""
        runs, self._runs = self._runs or [], None
        if self.parent.sampled:
            self._end_ns = end_ns
            self._tracing.exporter.put_later((Later(1, self._encoded), *runs))

    def _encoded(self) -> tuple[bytes]:
        parent = self.parent.span_id
        encoded = otlp.span(
            trace_id=self.parent.trace_id.to_bytes(16, "big"),
            span_id=self.span_id.to_bytes(8, "big"),
            parent_id=parent.to_bytes(8, "big") if parent is not None else None,
            name=self.name,
            kind=otlp.SERVER,
            start_ns=self.start_ns,
            end_ns=self._end_ns,
            values=otlp.attributes(self.attributes),
            events=self.events,
            error=self.error,
        )
        return (encoded,)
