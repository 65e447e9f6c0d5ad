"""Tracing's configuration and its OpenTelemetry SDK pipeline (tracer provider, OTLP export).

Off unless an OTLP endpoint is configured with the standard variables
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`);
`OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off. Export is OTLP over
HTTP with protobuf bodies; the exporter reads the other standard variables itself
(`OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`, `..._COMPRESSION`, certificates). Prompt
and completion contents go into spans only with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.

The SDK is imported only when tracing is on. The provider is the app's own (never the
global one), so several apps in one process do not share spans.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from keel import __version__

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

_log = logging.getLogger("keel.observe")

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for message contents (they hold personal data)."""

_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True, kw_only=True, slots=True)
class TracingConfig:
    """Where spans go and what they may hold."""

    endpoint: str
    """The OTLP/HTTP traces URL (`http://collector:4318/v1/traces`)."""

    service_name: str = "keel"
    capture_content: bool = False
    """Put prompts, completions, tool arguments and results into spans (personal data)."""

    batch: bool = True
    """Export from a background thread in batches (False: export as each span ends, for
    tests and short-lived tools)."""

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
        return cls(
            endpoint=endpoint,
            service_name=env.get("OTEL_SERVICE_NAME", "").strip() or "keel",
            capture_content=env.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _TRUE,
        )


class Tracing:
    """The app's tracer provider exporting over OTLP/HTTP."""

    def __init__(self, config: TracingConfig) -> None:
        # lazy: the SDK and the exporter (requests, protobuf) load only when tracing is on
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        self.config = config
        resource = Resource.create(
            {"service.name": config.service_name, "service.version": __version__}
        )
        self.provider: TracerProvider = TracerProvider(resource=resource)
        exporter = OTLPSpanExporter(endpoint=config.endpoint)
        processor = BatchSpanProcessor(exporter) if config.batch else SimpleSpanProcessor(exporter)
        self.provider.add_span_processor(processor)
        self.tracer: Tracer = self.provider.get_tracer("keel", __version__)

    def flush(self, timeout_ms: int = 10_000) -> bool:
        """Export every ended span now; False if that did not finish in time."""
        return bool(self.provider.force_flush(timeout_ms))

    def close(self) -> None:
        """Export what is left and stop the exporter."""
        self.provider.shutdown()
